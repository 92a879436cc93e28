#include "op_test_util.h"

namespace ltx::test {

TEST(OpCoverage, EveryOpHasATest) {
  std::string missing;
  for (int k = 0; k < kOpKindCount; ++k)
    if (!covered_ops().test(static_cast<size_t>(k))) missing += std::string(op_name(static_cast<OpKind>(k))) + " ";
  EXPECT_TRUE(missing.empty()) << "ops with no test case: " << missing;
}

}  // namespace ltx::test
