// A process-wide compute option, like the thread count: whether matmuls with block-quantized weights (GGUF Q8_0,
// Q4_0, Q5_0, Q4_K, Q5_K; Q6_K for 1-4 rows) quantize their activations to int8 per block of 32 and multiply in
// integers (backend/cpu/matmul/matmul_int8*, where the CPU has AVX512_VNNI) instead of decoding the
// weights to bf16. Faster, and less exact: an opt-in (`--int8-activations`, EngineOptions::int8_activations), off by
// default. Set it between runs, not while matmuls run; a GGUF Gemma loaded while it is on keeps its matrices encoded.
#pragma once

namespace ltx {

void set_int8_activations(bool on);
bool int8_activations();

}  // namespace ltx
