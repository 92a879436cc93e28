// GGUF block types decoded on the device (core/quant.cpp is the oracle, its comments the layouts): a weight reaches
// the program as its bytes [..., blocks · block bytes] (u8) and is decoded where it is read, so the device holds it
// at its quantized size. Bit fields are taken apart in u32, products rounded to f32 in the CPU's order.
#include "backend/xla/lower_ops.h"
#include "core/error.h"

namespace ltx::xla {

namespace {

// The blocks of one row set: [R, nb, block bytes] and the helpers that read their fields.
struct Blocks {
  HloBuilder& b;
  HloValue bytes;  // ui8 [R, nb, block bytes]

  int64_t rows() const { return bytes.dims[0]; }
  int64_t n() const { return bytes.dims[1]; }
  // Bytes [start, start + len) of every block, as u32 [R, nb, len].
  HloValue u32(int64_t start, int64_t len) const {
    return b.convert(b.slice_axis(bytes, 2, start, start + len), "ui32");
  }
  HloValue byte(const HloValue& v, int64_t i) const { return b.slice_axis(v, 2, i, i + 1); }
  HloValue c(double v, const HloValue& like) const { return b.splat(v, like.elem, like.dims); }
  HloValue band(const HloValue& x, uint32_t mask) const { return b.binary("and", x, c(mask, x)); }
  HloValue shr(const HloValue& x, uint32_t n) const { return b.binary("shift_right_logical", x, c(n, x)); }
  HloValue shl(const HloValue& x, uint32_t n) const { return b.binary("shift_left", x, c(n, x)); }
  HloValue bor(const HloValue& x, const HloValue& y) const { return b.binary("or", x, y); }
  // The little-endian f16 at `offset`, as f32 [R, nb, 1].
  HloValue f16(int64_t offset) const {
    const HloValue v = bor(u32(offset, 1), shl(u32(offset + 1, 1), 8));
    return b.convert(b.bitcast(b.convert(v, "ui16"), "f16"), "f32");
  }
  // An unsigned field minus `bias`, as f32.
  HloValue biased(const HloValue& q, int bias) const {
    const HloValue s = b.convert(q, "i32");
    return b.convert(b.sub(s, c(bias, s)), "f32");
  }
  // x [R, nb, k] times a per-block value [R, nb, 1].
  HloValue times_block(const HloValue& x, const HloValue& d) const {
    const int64_t keep[] = {0, 1, 2};
    return b.mul(b.broadcast_in_dim(d, x.dims, keep), x);
  }
  // v [R, nb, groups] repeated `each` times along the block: [R, nb, groups · each].
  HloValue repeat(const HloValue& v, int64_t each) const {
    const int64_t keep[] = {0, 1, 2};
    return b.reshape(b.broadcast_in_dim(v, {rows(), n(), v.dims[2], each}, keep), {rows(), n(), v.dims[2] * each});
  }
  // Low and high nibbles of bytes [R, nb, g, len] stacked as [R, nb, g, 2, len] -> [R, nb, g·2·len].
  HloValue nibbles(const HloValue& q) const {
    std::vector<int64_t> one = q.dims;
    one.insert(one.end() - 1, 1);
    const HloValue halves[] = {b.reshape(band(q, 0x0F), one), b.reshape(shr(q, 4), one)};
    return b.reshape(b.concat(halves, q.rank() - 1), {rows(), n(), q.numel() * 2 / (rows() * n())});
  }
};

// Q4_K / Q5_K's 12 scale bytes at `offset` -> (sc, m), each u32 [R, nb, 8] (core/quant.cpp unpack_scales_mins).
std::pair<HloValue, HloValue> scales_mins(const Blocks& k, int64_t offset) {
  const HloValue s03 = k.u32(offset, 4), s47 = k.u32(offset + 4, 4), s811 = k.u32(offset + 8, 4);
  const HloValue sc_hi = k.bor(k.band(s811, 0x0F), k.band(k.shr(s03, 2), 0x30));
  const HloValue m_hi = k.bor(k.shr(s811, 4), k.band(k.shr(s47, 2), 0x30));
  const HloValue sc[] = {k.band(s03, 0x3F), sc_hi}, m[] = {k.band(s47, 0x3F), m_hi};
  return {k.b.concat(sc, 2), k.b.concat(m, 2)};
}

// (d · sc[j]) · q - dmin · m[j] over 8 sub-blocks of 32.
HloValue k_quant_values(const Blocks& k, const HloValue& q, int64_t scales_offset) {
  HloBuilder& b = k.b;
  const auto [sc, m] = scales_mins(k, scales_offset);
  const HloValue ds = k.times_block(b.convert(sc, "f32"), k.f16(0));
  const HloValue dm = k.times_block(b.convert(m, "f32"), k.f16(2));
  return b.sub(b.mul(k.repeat(ds, 32), b.convert(q, "f32")), k.repeat(dm, 32));
}

HloValue decode(const Blocks& k, DType type) {
  HloBuilder& b = k.b;
  const int64_t r = k.rows(), nb = k.n();
  switch (type) {
    case DType::Q8_0: {
      const HloValue q = b.convert(b.bitcast(b.slice_axis(k.bytes, 2, 2, 34), "i8"), "f32");
      return k.times_block(q, k.f16(0));
    }
    case DType::Q4_0: {
      const HloValue q = k.nibbles(b.reshape(k.u32(2, 16), {r, nb, 1, 16}));
      return k.times_block(k.biased(q, 8), k.f16(0));
    }
    case DType::Q5_0: {
      const HloValue qh4 = k.u32(2, 4);
      const HloValue qh = k.bor(k.bor(k.byte(qh4, 0), k.shl(k.byte(qh4, 1), 8)),
                                k.bor(k.shl(k.byte(qh4, 2), 16), k.shl(k.byte(qh4, 3), 24)));
      const int64_t keep[] = {0, 1, 2};
      const HloValue bit =
          b.binary("shift_right_logical", b.broadcast_in_dim(qh, {r, nb, 32}, keep), b.iota("ui32", {r, nb, 32}, 2));
      const HloValue q = k.bor(k.nibbles(b.reshape(k.u32(6, 16), {r, nb, 1, 16})), k.shl(k.band(bit, 1), 4));
      return k.times_block(k.biased(q, 16), k.f16(0));
    }
    case DType::Q4_K:
      return k_quant_values(k, k.nibbles(b.reshape(k.u32(16, 128), {r, nb, 4, 32})), 4);
    case DType::Q5_K: {
      const HloValue low = k.nibbles(b.reshape(k.u32(48, 128), {r, nb, 4, 32}));  // sub-block j = 2g + half
      const int64_t qh_axes[] = {0, 1, 3};
      const HloValue qh = b.broadcast_in_dim(k.u32(16, 32), {r, nb, 8, 32}, qh_axes);
      const HloValue high = k.band(b.binary("shift_right_logical", qh, b.iota("ui32", {r, nb, 8, 32}, 2)), 1);
      return k_quant_values(k, k.bor(low, b.reshape(k.shl(high, 4), {r, nb, 256})), 4);
    }
    case DType::Q6_K: {
      // Element 128h + 32·quad + i: nibble quad / 2 of ql[64h + 32·(quad % 2) + i], bits 2·quad.. of qh[32h + i].
      const HloValue ql = b.reshape(k.u32(0, 128), {r, nb, 2, 2, 32});  // [h, quad % 2, i]
      const HloValue lo = b.reshape(k.band(ql, 0x0F), {r, nb, 2, 1, 2, 32});
      const HloValue hi = b.reshape(k.shr(ql, 4), {r, nb, 2, 1, 2, 32});
      const HloValue parts[] = {lo, hi};
      const HloValue low = b.reshape(b.concat(parts, 3), {r, nb, 2, 4, 32});  // quad = 2·nibble + quad % 2
      const int64_t qh_axes[] = {0, 1, 2, 4};
      const HloValue qh = b.broadcast_in_dim(b.reshape(k.u32(128, 64), {r, nb, 2, 32}), {r, nb, 2, 4, 32}, qh_axes);
      const HloValue shift = k.shl(b.iota("ui32", {r, nb, 2, 4, 32}, 3), 1);
      const HloValue high = k.band(b.binary("shift_right_logical", qh, shift), 3);
      const HloValue q = b.reshape(k.bor(low, k.shl(high, 4)), {r, nb, 256});
      const HloValue scales = b.convert(b.bitcast(b.slice_axis(k.bytes, 2, 192, 208), "i8"), "f32");
      return b.mul(k.repeat(k.times_block(scales, k.f16(208)), 16), k.biased(q, 32));
    }
    default:
      fail("xla", "no device decoding for " + std::string(dtype_name(type)));
  }
}

}  // namespace

HloValue dequantize_rows(HloBuilder& b, const HloValue& bytes, DType type, int64_t k) {
  const int64_t block_bytes = static_cast<int64_t>(dtype_block_bytes(type));
  const int64_t block_elems = static_cast<int64_t>(dtype_block_elems(type));
  std::vector<int64_t> lead(bytes.dims.begin(), bytes.dims.end() - 1);
  int64_t rows = 1;
  for (int64_t d : lead) rows *= d;
  const Blocks blocks{b, b.reshape(bytes, {rows, k / block_elems, block_bytes})};
  std::vector<int64_t> dims = lead;
  dims.push_back(k);
  return b.reshape(decode(blocks, type), dims);
}

}  // namespace ltx::xla
