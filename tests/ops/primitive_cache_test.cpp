// The bounded primitive cache: one object per key while it is usable, made again when not, never more than its
// capacity held, and objects a caller still holds survive a drop.
#include "backend/cpu/primitive_cache.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace ltx::cpu {
namespace {

struct Made {
  int serial = 0;
};

TEST(PrimitiveCache, SameKeyGivesTheSameObjectAndMakesItOnce) {
  PrimitiveCache<std::string, Made> cache(4);
  int makes = 0;
  const auto make = [&] { return std::make_shared<Made>(Made{++makes}); };
  const auto a = cache.get("a", make);
  const auto b = cache.get("b", make);
  EXPECT_EQ(cache.get("a", make), a);
  EXPECT_EQ(cache.get("b", make), b);
  EXPECT_NE(a, b);
  EXPECT_EQ(makes, 2);
}

TEST(PrimitiveCache, AnUnusableEntryIsMadeAgainInItsPlace) {
  PrimitiveCache<int, Made> cache(4);
  int makes = 0;
  const auto make = [&] { return std::make_shared<Made>(Made{++makes}); };
  const auto first = cache.get(7, make);
  const auto again = cache.get(7, make, [](const Made& m) { return m.serial != 1; });
  EXPECT_NE(again, first);
  EXPECT_EQ(again->serial, 2);
  EXPECT_EQ(cache.get(7, make), again);  // the replacement is what the key holds now
  EXPECT_EQ(cache.size(), 1u);
}

TEST(PrimitiveCache, HoldsNoMoreThanItsCapacityAndDropsOnlyItsOwnReferences) {
  PrimitiveCache<int, Made> cache(3);
  int makes = 0;
  const auto make = [&] { return std::make_shared<Made>(Made{++makes}); };
  const auto held = cache.get(0, make);
  for (int key = 1; key < 10; ++key) {
    cache.get(key, make);
    EXPECT_LE(cache.size(), 3u) << "after key " << key;
  }
  EXPECT_EQ(held->serial, 1);           // still alive: the caller's reference
  EXPECT_NE(cache.get(0, make), held);  // dropped from the cache, made again
  EXPECT_EQ(makes, 11);
}

}  // namespace
}  // namespace ltx::cpu
