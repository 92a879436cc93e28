// The main of every test binary: GoogleTest, with OpenMP's idle workers told not to spin (core/openmp_env.h).
#include <gtest/gtest.h>

#include "core/openmp_env.h"

int main(int argc, char** argv) {
  ltx::ensure_passive_openmp_wait(argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
