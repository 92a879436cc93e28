#include "backend/xla/hlo_builder.h"

#include <bit>
#include <cmath>
#include <cstdio>

#include "core/error.h"

namespace ltx::xla {

Elem elem_of(DType dtype) {
  switch (dtype) {
    case DType::F32:
      return "f32";
    case DType::BF16:
      return "bf16";
    case DType::F16:
      return "f16";
    case DType::I32:
      return "i32";
    case DType::I64:
      return "i64";
    case DType::U8:
      return "ui8";
    case DType::F8_E4M3:
      return "f8E4M3FN";
    case DType::F8_E5M2:
      return "f8E5M2";
    default:
      fail("xla", "no StableHLO element type holds " + std::string(dtype_name(dtype)));
  }
}

bool is_integer(const Elem& e) { return e != "i1" && (e[0] == 'i' || e[0] == 'u'); }

int64_t HloValue::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string HloValue::type() const {
  std::string t = "tensor<";
  for (int64_t d : dims) t += std::to_string(d) + "x";
  return t + elem + ">";
}

std::string i64_array(std::span<const int64_t> values) {
  std::string s = "array<i64";
  for (size_t i = 0; i < values.size(); ++i) s += (i == 0 ? ": " : ", ") + std::to_string(values[i]);
  return s + ">";
}

namespace {

std::string list(std::span<const int64_t> values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) s += (i == 0 ? "" : ", ") + std::to_string(values[i]);
  return s + "]";
}

std::string types(std::span<const HloValue> values) {
  std::string s;
  for (size_t i = 0; i < values.size(); ++i) s += (i == 0 ? "" : ", ") + values[i].type();
  return s;
}

}  // namespace

HloValue HloBuilder::fresh(Elem elem, std::vector<int64_t> dims) {
  return HloValue{"%v" + std::to_string(next_++), std::move(elem), std::move(dims)};
}

HloValue HloBuilder::parameter(Elem elem, std::vector<int64_t> dims) {
  HloValue p{"%arg" + std::to_string(parameters_.size()), std::move(elem), std::move(dims)};
  parameters_.push_back(p);
  return p;
}

std::string HloBuilder::module(std::span<const HloValue> results) const {
  std::string s = "module @ltx attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n";
  s += "  func.func public @main(";
  for (size_t i = 0; i < parameters_.size(); ++i)
    s += (i == 0 ? "" : ", ") + parameters_[i].name + ": " + parameters_[i].type();
  s += ") -> (" + types(results) + ") {\n" + body_ + "    \"func.return\"(";
  for (size_t i = 0; i < results.size(); ++i) s += (i == 0 ? "" : ", ") + results[i].name;
  s += ") : (" + types(results) + ") -> ()\n  }\n}\n";
  return s;
}

HloValue HloBuilder::emit(std::string_view op, std::span<const HloValue> operands, const std::string& attributes,
                          Elem elem, std::vector<int64_t> dims) {
  HloValue r = fresh(std::move(elem), std::move(dims));
  body_ += "    " + r.name + " = \"" + std::string(op) + "\"(";
  for (size_t i = 0; i < operands.size(); ++i) body_ += (i == 0 ? "" : ", ") + operands[i].name;
  body_ += ")";
  if (!attributes.empty()) body_ += " {" + attributes + "}";
  body_ += " : (" + types(operands) + ") -> " + r.type() + "\n";
  return r;
}

HloValue HloBuilder::unary(std::string_view op, const HloValue& x) {
  return emit("stablehlo." + std::string(op), std::span(&x, 1), "", x.elem, x.dims);
}

HloValue HloBuilder::binary(std::string_view op, const HloValue& a, const HloValue& b) {
  if (a.dims != b.dims || a.elem != b.elem)
    fail("xla", "binary " + std::string(op) + " on " + a.type() + ", " + b.type());
  const HloValue operands[] = {a, b};
  return emit("stablehlo." + std::string(op), operands, "", a.elem, a.dims);
}

HloValue HloBuilder::compare(const HloValue& a, const HloValue& b, Compare direction) {
  static const char* names[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
  const HloValue operands[] = {a, b};
  return emit(
      "stablehlo.compare", operands,
      std::string("comparison_direction = #stablehlo<comparison_direction ") + names[static_cast<int>(direction)] + ">",
      "i1", a.dims);
}

HloValue HloBuilder::select(const HloValue& predicate, const HloValue& on_true, const HloValue& on_false) {
  const HloValue operands[] = {predicate, on_true, on_false};
  return emit("stablehlo.select", operands, "", on_true.elem, on_true.dims);
}

HloValue HloBuilder::clamp(const HloValue& lo, const HloValue& x, const HloValue& hi) {
  const HloValue operands[] = {lo, x, hi};
  return emit("stablehlo.clamp", operands, "", x.elem, x.dims);
}

HloValue HloBuilder::erf(const HloValue& x) { return emit("chlo.erf", std::span(&x, 1), "", x.elem, x.dims); }

HloValue HloBuilder::convert(const HloValue& x, const Elem& to) {
  if (x.elem == to) return x;
  return emit("stablehlo.convert", std::span(&x, 1), "", to, x.dims);
}

HloValue HloBuilder::bitcast(const HloValue& x, const Elem& to) {
  return emit("stablehlo.bitcast_convert", std::span(&x, 1), "", to, x.dims);
}

HloValue HloBuilder::splat(double value, const Elem& elem, std::vector<int64_t> dims) {
  std::string literal;
  Elem as = elem;
  if (elem == "i1") {
    literal = value != 0 ? "true" : "false";
  } else if (is_integer(elem)) {
    literal = std::to_string(static_cast<int64_t>(value));
  } else {
    char hex[16];
    std::snprintf(hex, sizeof hex, "0x%08X", std::bit_cast<uint32_t>(static_cast<float>(value)));
    literal = hex;
    as = "f32";
  }
  HloValue shape{"", as, dims};
  HloValue c = emit("stablehlo.constant", {}, "value = dense<" + literal + "> : " + shape.type(), as, dims);
  return convert(c, elem);
}

HloValue HloBuilder::iota(const Elem& elem, std::vector<int64_t> dims, int axis) {
  return emit("stablehlo.iota", {}, "iota_dimension = " + std::to_string(axis) + " : i64", elem, std::move(dims));
}

HloValue HloBuilder::reshape(const HloValue& x, std::vector<int64_t> dims) {
  if (dims == x.dims) return x;
  return emit("stablehlo.reshape", std::span(&x, 1), "", x.elem, std::move(dims));
}

HloValue HloBuilder::transpose(const HloValue& x, std::span<const int> perm) {
  std::vector<int64_t> p(perm.begin(), perm.end()), dims;
  bool identity = true;
  for (size_t i = 0; i < p.size(); ++i) {
    dims.push_back(x.dims[static_cast<size_t>(p[i])]);
    identity = identity && p[i] == static_cast<int64_t>(i);
  }
  if (identity) return x;
  return emit("stablehlo.transpose", std::span(&x, 1), "permutation = " + i64_array(p), x.elem, std::move(dims));
}

HloValue HloBuilder::broadcast_in_dim(const HloValue& x, std::vector<int64_t> dims, std::span<const int64_t> mapping) {
  return emit("stablehlo.broadcast_in_dim", std::span(&x, 1), "broadcast_dimensions = " + i64_array(mapping), x.elem,
              std::move(dims));
}

HloValue HloBuilder::broadcast_to(const HloValue& x, const std::vector<int64_t>& dims) {
  if (x.dims == dims) return x;
  // Size-1 dimensions that broadcast are dropped first, so broadcast_in_dim maps only equal extents.
  const size_t lead = dims.size() - x.dims.size();
  std::vector<int64_t> kept_dims, mapping;
  for (size_t i = 0; i < x.dims.size(); ++i) {
    if (x.dims[i] == dims[lead + i]) {
      kept_dims.push_back(x.dims[i]);
      mapping.push_back(static_cast<int64_t>(lead + i));
    } else if (x.dims[i] != 1) {
      fail("xla", "cannot broadcast " + x.type() + " to " + HloValue{"", x.elem, dims}.type());
    }
  }
  return broadcast_in_dim(reshape(x, kept_dims), dims, mapping);
}

HloValue HloBuilder::slice(const HloValue& x, std::span<const int64_t> start, std::span<const int64_t> limit,
                           std::span<const int64_t> strides) {
  std::vector<int64_t> dims;
  bool whole = true;
  for (size_t i = 0; i < start.size(); ++i) {
    dims.push_back((limit[i] - start[i] + strides[i] - 1) / strides[i]);
    whole = whole && start[i] == 0 && limit[i] == x.dims[i] && strides[i] == 1;
  }
  if (whole) return x;
  return emit("stablehlo.slice", std::span(&x, 1),
              "start_indices = " + i64_array(start) + ", limit_indices = " + i64_array(limit) +
                  ", strides = " + i64_array(strides),
              x.elem, std::move(dims));
}

HloValue HloBuilder::slice_axis(const HloValue& x, int axis, int64_t start, int64_t limit, int64_t stride) {
  std::vector<int64_t> lo(x.dims.size(), 0), hi = x.dims, st(x.dims.size(), 1);
  lo[static_cast<size_t>(axis)] = start;
  hi[static_cast<size_t>(axis)] = limit;
  st[static_cast<size_t>(axis)] = stride;
  return slice(x, lo, hi, st);
}

HloValue HloBuilder::concat(std::span<const HloValue> parts, int axis) {
  if (parts.size() == 1) return parts[0];
  std::vector<int64_t> dims = parts[0].dims;
  dims[static_cast<size_t>(axis)] = 0;
  for (const HloValue& p : parts) dims[static_cast<size_t>(axis)] += p.dims[static_cast<size_t>(axis)];
  return emit("stablehlo.concatenate", parts, "dimension = " + std::to_string(axis) + " : i64", parts[0].elem,
              std::move(dims));
}

HloValue HloBuilder::pad(const HloValue& x, const HloValue& value, std::span<const int64_t> low,
                         std::span<const int64_t> high, std::span<const int64_t> interior) {
  std::vector<int64_t> dims;
  bool none = true;
  for (size_t i = 0; i < x.dims.size(); ++i) {
    const int64_t n = x.dims[i];
    dims.push_back(low[i] + high[i] + n + (n > 0 ? (n - 1) * interior[i] : 0));
    none = none && low[i] == 0 && high[i] == 0 && interior[i] == 0;
  }
  if (none) return x;
  const HloValue operands[] = {x, value};
  return emit("stablehlo.pad", operands,
              "edge_padding_low = " + i64_array(low) + ", edge_padding_high = " + i64_array(high) +
                  ", interior_padding = " + i64_array(interior),
              x.elem, std::move(dims));
}

HloValue HloBuilder::reverse(const HloValue& x, std::span<const int64_t> axes) {
  return emit("stablehlo.reverse", std::span(&x, 1), "dimensions = " + i64_array(axes), x.elem, x.dims);
}

HloValue HloBuilder::reduce(const HloValue& x, std::span<const int64_t> axes, Reduction kind) {
  if (axes.empty()) return x;
  double init = 0;
  std::string op = "stablehlo.add";
  if (kind == Reduction::Max) {
    init = -INFINITY;
    op = "stablehlo.maximum";
  } else if (kind == Reduction::Min) {
    init = INFINITY;
    op = "stablehlo.minimum";
  }
  const HloValue start = splat(init, x.elem, {});
  std::vector<int64_t> dims;
  for (size_t i = 0; i < x.dims.size(); ++i) {
    bool reduced = false;
    for (int64_t a : axes) reduced = reduced || a == static_cast<int64_t>(i);
    if (!reduced) dims.push_back(x.dims[i]);
  }
  const HloValue scalar{"", x.elem, {}};
  const std::string a = "%r" + std::to_string(next_++), b = "%r" + std::to_string(next_++),
                    s = "%r" + std::to_string(next_++);
  HloValue r = fresh(x.elem, dims);
  body_ += "    " + r.name + " = \"stablehlo.reduce\"(" + x.name + ", " + start.name + ") ({\n";
  body_ += "    ^bb0(" + a + ": " + scalar.type() + ", " + b + ": " + scalar.type() + "):\n";
  body_ += "      " + s + " = \"" + op + "\"(" + a + ", " + b + ") : (" + scalar.type() + ", " + scalar.type() +
           ") -> " + scalar.type() + "\n";
  body_ += "      \"stablehlo.return\"(" + s + ") : (" + scalar.type() + ") -> ()\n";
  body_ +=
      "    }) {dimensions = " + i64_array(axes) + "} : (" + x.type() + ", " + scalar.type() + ") -> " + r.type() + "\n";
  return r;
}

HloValue HloBuilder::dot_general(const HloValue& lhs, const HloValue& rhs, std::span<const int64_t> lhs_batch,
                                 std::span<const int64_t> rhs_batch, std::span<const int64_t> lhs_contract,
                                 std::span<const int64_t> rhs_contract, const Elem& result_elem) {
  auto contains = [](std::span<const int64_t> s, size_t i) {
    for (int64_t v : s)
      if (v == static_cast<int64_t>(i)) return true;
    return false;
  };
  std::vector<int64_t> dims;
  for (int64_t b : lhs_batch) dims.push_back(lhs.dims[static_cast<size_t>(b)]);
  for (size_t i = 0; i < lhs.dims.size(); ++i)
    if (!contains(lhs_batch, i) && !contains(lhs_contract, i)) dims.push_back(lhs.dims[i]);
  for (size_t i = 0; i < rhs.dims.size(); ++i)
    if (!contains(rhs_batch, i) && !contains(rhs_contract, i)) dims.push_back(rhs.dims[i]);
  std::string numbers;
  auto field = [&](const char* name, std::span<const int64_t> v) {
    if (v.empty()) return;
    numbers += std::string(numbers.empty() ? "" : ", ") + name + " = " + list(v);
  };
  field("lhs_batching_dimensions", lhs_batch);
  field("rhs_batching_dimensions", rhs_batch);
  field("lhs_contracting_dimensions", lhs_contract);
  field("rhs_contracting_dimensions", rhs_contract);
  const HloValue operands[] = {lhs, rhs};
  return emit("stablehlo.dot_general", operands, "dot_dimension_numbers = #stablehlo.dot<" + numbers + ">", result_elem,
              std::move(dims));
}

HloValue HloBuilder::convolution(const HloValue& x, const HloValue& w, const ConvWindow& window,
                                 const Elem& result_elem) {
  const size_t spatial = x.dims.size() - 2;
  std::string layout = "[b, f";
  std::string kernel = "[o, i";
  for (size_t i = 0; i < spatial; ++i) {
    layout += ", " + std::to_string(i);
    kernel += ", " + std::to_string(i);
  }
  layout += "]";
  kernel += "]";
  std::vector<int64_t> dims = {x.dims[0], w.dims[0]};
  std::string padding = "dense<[";
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t in = (x.dims[2 + i] - 1) * window.lhs_dilation[i] + 1 + window.pad_low[i] + window.pad_high[i];
    const int64_t k = (w.dims[2 + i] - 1) * window.rhs_dilation[i] + 1;
    dims.push_back(in < k ? 0 : (in - k) / window.stride[i] + 1);
    padding +=
        (i == 0 ? "[" : ", [") + std::to_string(window.pad_low[i]) + ", " + std::to_string(window.pad_high[i]) + "]";
  }
  padding += "]> : tensor<" + std::to_string(spatial) + "x2xi64>";
  const HloValue operands[] = {x, w};
  return emit(
      "stablehlo.convolution", operands,
      "dimension_numbers = #stablehlo.conv<" + layout + "x" + kernel + "->" + layout +
          ">, window_strides = " + i64_array(window.stride) + ", padding = " + padding +
          ", lhs_dilation = " + i64_array(window.lhs_dilation) + ", rhs_dilation = " + i64_array(window.rhs_dilation) +
          ", feature_group_count = " + std::to_string(window.feature_groups) + " : i64, batch_group_count = 1 : i64",
      result_elem, std::move(dims));
}

std::vector<HloValue> HloBuilder::while_loop(const std::vector<HloValue>& state, const Region& condition,
                                             const Region& body) {
  // Each region is written into its own text (the builder's body swapped out), its arguments named afresh.
  auto region = [&](const Region& fill) {
    std::vector<HloValue> args;
    std::string header = "    ^bb0(";
    for (size_t i = 0; i < state.size(); ++i) {
      args.push_back(HloValue{"%w" + std::to_string(next_++), state[i].elem, state[i].dims});
      header += (i == 0 ? "" : ", ") + args.back().name + ": " + args.back().type();
    }
    std::string outer;
    std::swap(outer, body_);
    const std::vector<HloValue> results = fill(*this, args);
    std::string text = header + "):\n" + body_ + "      \"stablehlo.return\"(";
    for (size_t i = 0; i < results.size(); ++i) text += (i == 0 ? "" : ", ") + results[i].name;
    text += ") : (" + types(results) + ") -> ()\n";
    std::swap(outer, body_);
    return text;
  };
  const std::string cond_text = region(condition), body_text = region(body);
  const std::string name = "%l" + std::to_string(next_++);
  body_ += "    " + name + ":" + std::to_string(state.size()) + " = \"stablehlo.while\"(";
  for (size_t i = 0; i < state.size(); ++i) body_ += (i == 0 ? "" : ", ") + state[i].name;
  body_ +=
      ") ({\n" + cond_text + "    }, {\n" + body_text + "    }) : (" + types(state) + ") -> (" + types(state) + ")\n";
  std::vector<HloValue> results;
  for (size_t i = 0; i < state.size(); ++i)
    results.push_back(HloValue{name + "#" + std::to_string(i), state[i].elem, state[i].dims});
  return results;
}

HloValue HloBuilder::dynamic_slice(const HloValue& x, const std::vector<HloValue>& starts, std::vector<int64_t> sizes) {
  std::vector<HloValue> operands = {x};
  operands.insert(operands.end(), starts.begin(), starts.end());
  return emit("stablehlo.dynamic_slice", operands, "slice_sizes = " + i64_array(sizes), x.elem, sizes);
}

HloValue HloBuilder::gather_rows(const HloValue& table, const HloValue& ids) {
  const int64_t r = ids.rank();
  std::vector<int64_t> dims = ids.dims;
  dims.push_back(table.dims[1]);
  const int64_t slice_sizes[] = {1, table.dims[1]};
  const HloValue operands[] = {table, ids};
  return emit("stablehlo.gather", operands,
              "dimension_numbers = #stablehlo.gather<offset_dims = [" + std::to_string(r) +
                  "], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = " + std::to_string(r) +
                  ">, indices_are_sorted = false, slice_sizes = " + i64_array(slice_sizes),
              table.elem, std::move(dims));
}

}  // namespace ltx::xla
