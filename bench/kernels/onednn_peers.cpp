#include "onednn_peers.h"

#include <cmath>
#include <oneapi/dnnl/dnnl.hpp>

#include "backend/cpu/matmul/onednn_matmul.h"
#include "core/error.h"

namespace ltx::cpu::onednn {
namespace {

using dims = dnnl::memory::dims;
using tag = dnnl::memory::format_tag;

dnnl::memory::data_type dt_of(DType t) {
  LTX_CHECK(t == DType::F32 || t == DType::BF16, "onednn", "peer: unsupported dtype ", dtype_name(t));
  return t == DType::F32 ? dnnl::memory::data_type::f32 : dnnl::memory::data_type::bf16;
}

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

}  // namespace

struct AttentionPeer::Impl {
  dnnl::memory::desc q_md, k_md, v_md, s_md, p_md, o_md;
  dnnl::matmul qk, pv;
  dnnl::softmax_forward softmax;
  dnnl::memory scores, probs;
};

AttentionPeer::AttentionPeer(int64_t h, int64_t tq, int64_t tk, int64_t d, DType dtype)
    : impl_(std::make_unique<Impl>()) {
  const auto dt = dt_of(dtype);
  auto& m = *impl_;
  m.q_md = dnnl::memory::desc(dims{h, tq, d}, dt, tag::abc);
  m.k_md = dnnl::memory::desc(dims{h, d, tk}, dt, tag::acb);  // kᵀ as a strided view of k [H, Tk, D]
  m.v_md = dnnl::memory::desc(dims{h, tk, d}, dt, tag::abc);
  m.s_md = dnnl::memory::desc(dims{h, tq, tk}, dnnl::memory::data_type::f32, tag::abc);
  m.p_md = dnnl::memory::desc(dims{h, tq, tk}, dt, tag::abc);
  m.o_md = dnnl::memory::desc(dims{h, tq, d}, dt, tag::abc);
  dnnl::primitive_attr scale;
  scale.set_output_scales(0, {1.0f / std::sqrt(static_cast<float>(d))});
  m.qk = dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(m.q_md, m.k_md, m.s_md), scale, engine()));
  m.softmax = dnnl::softmax_forward(dnnl::softmax_forward::primitive_desc(
      dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, m.s_md, 2), engine()));
  m.pv = dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(m.p_md, m.v_md, m.o_md), engine()));
  m.scores = dnnl::memory(m.s_md, engine());
  m.probs = dtype == DType::F32 ? m.scores : dnnl::memory(m.p_md, engine());
}

AttentionPeer::~AttentionPeer() = default;

void AttentionPeer::run(const void* q, const void* k, const void* v, void* out) {
  auto& m = *impl_;
  match_thread_count();
  dnnl::memory qm(m.q_md, engine(), const_cast<void*>(q)), km(m.k_md, engine(), const_cast<void*>(k)),
      vm(m.v_md, engine(), const_cast<void*>(v)), om(m.o_md, engine(), out);
  dnnl::stream st(engine());
  m.qk.execute(st, {{DNNL_ARG_SRC, qm}, {DNNL_ARG_WEIGHTS, km}, {DNNL_ARG_DST, m.scores}});
  // Softmax in f32 in place; for bf16 the probabilities are rounded by a reorder, as a bf16 engine would store them.
  m.softmax.execute(st, {{DNNL_ARG_SRC, m.scores}, {DNNL_ARG_DST, m.scores}});
  if (m.probs != m.scores) dnnl::reorder(m.scores, m.probs).execute(st, m.scores, m.probs);
  m.pv.execute(st, {{DNNL_ARG_SRC, m.probs}, {DNNL_ARG_WEIGHTS, vm}, {DNNL_ARG_DST, om}});
  st.wait();
}

struct ConvPeer::Impl {
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::convolution_forward conv;
  dnnl::memory::desc x_user, w_user;
  dnnl::memory x, w, y;
};

ConvPeer::ConvPeer(int64_t c, int64_t o, const int64_t s[3], const int64_t k[3], const int64_t pad[3], DType dtype)
    : impl_(std::make_unique<Impl>()) {
  const auto dt = dt_of(dtype);
  auto& m = *impl_;
  const dims out_sp{s[0] + 2 * pad[0] - k[0] + 1, s[1] + 2 * pad[1] - k[1] + 1, s[2] + 2 * pad[2] - k[2] + 1};
  m.x_user = dnnl::memory::desc(dims{1, c, s[0], s[1], s[2]}, dt, tag::ncdhw);
  m.w_user = dnnl::memory::desc(dims{o, c, k[0], k[1], k[2]}, dt, tag::oidhw);
  const dnnl::memory::desc x_any(dims{1, c, s[0], s[1], s[2]}, dt, tag::any);
  const dnnl::memory::desc w_any(dims{o, c, k[0], k[1], k[2]}, dt, tag::any);
  const dnnl::memory::desc y_any(dims{1, o, out_sp[0], out_sp[1], out_sp[2]}, dt, tag::any);
  const dims stride{1, 1, 1}, padding{pad[0], pad[1], pad[2]};
  m.pd = dnnl::convolution_forward::primitive_desc(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, x_any,
                                      w_any, y_any, stride, padding, padding),
      engine());
  m.conv = dnnl::convolution_forward(m.pd);
  m.x = dnnl::memory(m.pd.src_desc(), engine());
  m.w = dnnl::memory(m.pd.weights_desc(), engine());
  m.y = dnnl::memory(m.pd.dst_desc(), engine());
}

ConvPeer::~ConvPeer() = default;

void ConvPeer::set_inputs(const void* x, const void* w) {
  auto& m = *impl_;
  dnnl::memory xu(m.x_user, engine(), const_cast<void*>(x)), wu(m.w_user, engine(), const_cast<void*>(w));
  dnnl::stream st(engine());
  dnnl::reorder(xu, m.x).execute(st, xu, m.x);
  dnnl::reorder(wu, m.w).execute(st, wu, m.w);
  st.wait();
}

void ConvPeer::run() {
  auto& m = *impl_;
  match_thread_count();
  dnnl::stream st(engine());
  m.conv.execute(st, {{DNNL_ARG_SRC, m.x}, {DNNL_ARG_WEIGHTS, m.w}, {DNNL_ARG_DST, m.y}});
  st.wait();
}

}  // namespace ltx::cpu::onednn
