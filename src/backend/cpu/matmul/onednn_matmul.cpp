#include "backend/cpu/matmul/onednn_matmul.h"

#include <dlfcn.h>

#include <oneapi/dnnl/dnnl.hpp>

#include "backend/cpu/onednn_engine.h"
#include "core/error.h"
#include "core/thread_pool.h"

namespace ltx::cpu::onednn {
namespace {

dnnl::memory::data_type dt_of(DType t) {
  switch (t) {
    case DType::F32:
      return dnnl::memory::data_type::f32;
    case DType::BF16:
      return dnnl::memory::data_type::bf16;
    default:
      fail("onednn", "matmul: unsupported dtype " + std::string(dtype_name(t)));
  }
}

dnnl::engine& engine() { return onednn_engine(); }

}  // namespace

bool supports(DType t) { return t == DType::F32 || t == DType::BF16; }

void match_thread_count() {
  // The OpenMP runtime is whichever one libdnnl was linked with (Debian's: libgomp); it is looked up at run time
  // so that we do not link a second one. OMP_NUM_THREADS cannot do this: the runtime reads it when loaded.
  using SetThreads = void (*)(int);
  static const auto set_threads = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  thread_local int current = 0;
  const int n = thread_count();
  if (set_threads != nullptr && current != n) {
    set_threads(n);
    current = n;
  }
}

struct Matmul::Impl {
  MatmulShape shape;
  dnnl::memory::desc a_md, b_md, out_md, b_user_md;
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul prim;
  dnnl::memory b_mem;
};

Matmul::Matmul(const MatmulShape& s) : impl_(std::make_unique<Impl>()) {
  using dims = dnnl::memory::dims;
  impl_->shape = s;
  impl_->a_md = dnnl::memory::desc(dims{s.m, s.k}, dt_of(s.a), dims{s.lda, 1});
  impl_->out_md = dnnl::memory::desc(dims{s.m, s.n}, dt_of(s.out), dims{s.ldo, 1});
  impl_->b_user_md = dnnl::memory::desc(dims{s.k, s.n}, dt_of(s.b), dims{s.b_sk, s.b_sn});
  impl_->b_md = s.packed_weights ? dnnl::memory::desc(dims{s.k, s.n}, dt_of(s.b), dnnl::memory::format_tag::any)
                                 : impl_->b_user_md;
  try {
    // Per-call scratchpads: the primitive is shared by every thread (matmul_opt.cpp's cache), and oneDNN's library
    // scratchpad, one for all primitives in Debian's build, is safe only in the thread that made the primitive
    // (scratchpad_mode::library): from several threads the outputs were sometimes wrong.
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::matmul::desc d(impl_->a_md, impl_->b_md, impl_->out_md);
    impl_->pd = dnnl::matmul::primitive_desc(d, attr, engine());
    impl_->prim = dnnl::matmul(impl_->pd);
  } catch (const dnnl::error& e) {
    fail("onednn", std::string("matmul primitive: ") + e.what());
  }
}

Matmul::~Matmul() = default;

void Matmul::set_weights(const void* b) {
  dnnl::memory user(impl_->b_user_md, engine(), const_cast<void*>(b));
  if (!impl_->shape.packed_weights) {
    impl_->b_mem = user;
    return;
  }
  impl_->b_mem = dnnl::memory(impl_->pd.weights_desc(), engine());
  dnnl::stream st(engine());
  dnnl::reorder(user, impl_->b_mem).execute(st, user, impl_->b_mem);
  st.wait();
}

void Matmul::run(const void* a, void* out) {
  LTX_CHECK(impl_->b_mem, "onednn", "matmul: set_weights was not called");
  match_thread_count();
  dnnl::memory a_mem(impl_->a_md, engine(), const_cast<void*>(a));
  dnnl::memory out_mem(impl_->out_md, engine(), out);
  dnnl::memory scratch(impl_->pd.scratchpad_desc(), engine());
  dnnl::stream st(engine());
  impl_->prim.execute(st, {{DNNL_ARG_SRC, a_mem},
                           {DNNL_ARG_WEIGHTS, impl_->b_mem},
                           {DNNL_ARG_DST, out_mem},
                           {DNNL_ARG_SCRATCHPAD, scratch}});
  st.wait();
}

void Matmul::run(const void* a, const void* b, void* out) const {
  LTX_CHECK(!impl_->shape.packed_weights, "onednn", "matmul: per-call weights need an unpacked primitive");
  match_thread_count();
  dnnl::memory a_mem(impl_->a_md, engine(), const_cast<void*>(a));
  dnnl::memory b_mem(impl_->b_user_md, engine(), const_cast<void*>(b));
  dnnl::memory out_mem(impl_->out_md, engine(), out);
  dnnl::memory scratch(impl_->pd.scratchpad_desc(), engine());
  dnnl::stream st(engine());
  impl_->prim.execute(
      st, {{DNNL_ARG_SRC, a_mem}, {DNNL_ARG_WEIGHTS, b_mem}, {DNNL_ARG_DST, out_mem}, {DNNL_ARG_SCRATCHPAD, scratch}});
  st.wait();
}

}  // namespace ltx::cpu::onednn
