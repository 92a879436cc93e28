// One instruction of a hand-written fused program (ops/fused.h), for the tests that build programs directly.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "ops/fused.h"

namespace ltx::test {

inline FusedInstr instr(OpKind kind, std::initializer_list<int> args, OpAttrs attrs = NoAttrs{}) {
  FusedInstr i;
  i.kind = kind;
  i.attrs = attrs;
  i.n_args = static_cast<int8_t>(args.size());
  int k = 0;
  for (int a : args) i.args[k++] = static_cast<int16_t>(a);
  return i;
}

}  // namespace ltx::test
