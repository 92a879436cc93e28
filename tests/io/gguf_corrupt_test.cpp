// Every malformed GGUF file must produce one ltx::Error naming the file and the problem, never a crash.
#include <gtest/gtest.h>

#include "gguf_writer.h"
#include "io/gguf.h"
#include "test_files.h"

namespace ltx {
namespace {

using test::bytes_of;
using test::GGUFWriter;

class GGUFCorrupt : public ::testing::Test {
 protected:
  std::string save(const std::string& bytes) {
    const std::string path = dir_.file("bad" + std::to_string(count_++) + ".gguf");
    test::write_bytes(path, bytes);
    return path;
  }
  void expect_open_error(const std::string& bytes, std::initializer_list<std::string> parts) {
    const std::string path = save(bytes);
    std::vector<std::string> all(parts);
    all.push_back(path);
    all.push_back("[gguf]");
    try {
      GGUFFile::open(path);
    } catch (const Error& e) {
      for (const auto& p : all) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << p << " in " << e.what();
      return;
    }
    ADD_FAILURE() << "no error for " << path;
  }
  // A small valid file: metadata of several kinds, then two tensors; the last tensor ends the file.
  static GGUFWriter valid() {
    GGUFWriter w;
    w.add_string("general.architecture", "gemma3");
    w.add_u32("general.alignment", 32);
    w.add_string_array("tokens", {"a", "bc", "def"});
    w.add_array<float>("scores", 6, {1, 2, 3});
    w.add_tensor("a", {4, 2}, 0, bytes_of(std::vector<float>(8, 1.0f)));
    w.add_tensor("b", {32}, 8, std::string(34, '\x01'));
    return w;
  }

  test::TempDir dir_;
  int count_ = 0;
};

TEST_F(GGUFCorrupt, MagicAndVersion) {
  expect_open_error("", {"not a GGUF file"});
  expect_open_error("GGU", {"not a GGUF file"});
  expect_open_error("GGML" + std::string(20, '\0'), {"not a GGUF file"});
  GGUFWriter v1 = valid();
  v1.version = 1;
  expect_open_error(v1.build(), {"version 1 is not supported"});
  GGUFWriter v4 = valid();
  v4.version = 4;
  expect_open_error(v4.build(), {"unsupported GGUF version 4"});
}

TEST_F(GGUFCorrupt, EveryTruncationFails) {
  const std::string full = valid().build();
  ASSERT_NO_THROW(GGUFFile::open(save(full)));
  for (size_t n = 0; n < full.size(); ++n) {
    const std::string path = save(full.substr(0, n));
    EXPECT_THROW(GGUFFile::open(path), Error) << "prefix of " << n << " bytes";
  }
}

// Flipping any header byte either still parses or throws ltx::Error; ASan/UBSan catch any out-of-bounds read.
TEST_F(GGUFCorrupt, ByteFlipsNeverCrash) {
  const std::string full = valid().build();
  const std::string path = dir_.file("flip.gguf");
  for (size_t i = 0; i < full.size() - 34 - 32; ++i) {
    for (unsigned char v : {0x00, 0x7f, 0xff}) {
      std::string bytes = full;
      bytes[i] = static_cast<char>(v);
      test::write_bytes(path, bytes);
      try {
        const auto f = GGUFFile::open(path);
        for (const auto& t : f.tensors()) {
          try {
            f.get(t.name);
          } catch (const Error&) {
          }
        }
      } catch (const Error&) {
      }
    }
  }
}

TEST_F(GGUFCorrupt, LyingLengths) {
  std::string bytes = valid().build();
  const uint64_t huge = uint64_t{1} << 62;
  std::memcpy(bytes.data() + 24, &huge, 8);  // the first key's length
  expect_open_error(bytes, {"truncated file", "metadata key"});

  GGUFWriter strings;
  strings.add_raw_kv(std::string("\x01\0\0\0\0\0\0\0k\x09\0\0\0\x08\0\0\0", 17) +
                     std::string("\xff\xff\xff\xff\xff\xff\x0f\0", 8));
  expect_open_error(strings.build(), {"metadata 'k'", "strings cannot fit"});

  GGUFWriter ints;
  ints.add_raw_kv(std::string("\x01\0\0\0\0\0\0\0k\x09\0\0\0\x04\0\0\0", 17) + std::string("\0\0\0\0\0\0\0\x40", 8));
  expect_open_error(ints.build(), {"metadata 'k'", "runs past the end"});

  GGUFWriter n_kv = valid();
  n_kv.n_kv_override = int64_t{1} << 40;
  expect_open_error(n_kv.build(), {"metadata count 1099511627776 cannot fit"});
  GGUFWriter n_tensors = valid();
  n_tensors.n_tensors_override = int64_t{1} << 40;
  expect_open_error(n_tensors.build(), {"tensor count 1099511627776 cannot fit"});
}

TEST_F(GGUFCorrupt, ValueTypes) {
  GGUFWriter unknown;
  unknown.add_raw_kv(std::string("\x01\0\0\0\0\0\0\0k\x0d\0\0\0", 13) + std::string(8, '\0'));
  expect_open_error(unknown.build(), {"metadata 'k'", "unknown value type 13"});
  GGUFWriter nested;
  nested.add_raw_kv(std::string("\x01\0\0\0\0\0\0\0k\x09\0\0\0\x09\0\0\0", 17) + std::string(8, '\0'));
  expect_open_error(nested.build(), {"metadata 'k'", "nested arrays"});
  GGUFWriter dup;
  dup.add_u32("k", 1);
  dup.add_u32("k", 2);
  expect_open_error(dup.build(), {"'k' appears twice"});
}

TEST_F(GGUFCorrupt, Alignment) {
  GGUFWriter three;
  three.add_u32("general.alignment", 3);
  expect_open_error(three.build(), {"general.alignment 3 is not a power of two"});
  GGUFWriter zero;
  zero.add_u32("general.alignment", 0);
  expect_open_error(zero.build(), {"general.alignment 0 is not a power of two"});
  GGUFWriter wide;
  wide.add_u64("general.alignment", 32);
  expect_open_error(wide.build(), {"general.alignment must be u32, not u64"});
}

TEST_F(GGUFCorrupt, TensorInfos) {
  GGUFWriter rank;
  rank.add_tensor("t", {1, 1, 1, 1, 4}, 0, std::string(16, '\0'));
  expect_open_error(rank.build(), {"'t'", "5 dimensions"});
  GGUFWriter overflow;
  overflow.add_tensor("t", {uint64_t{1} << 32, uint64_t{1} << 32}, 0, "");
  expect_open_error(overflow.build(), {"'t'", "dimensions overflow"});
  GGUFWriter negative;
  negative.add_tensor("t", {~uint64_t{0}}, 0, "");
  expect_open_error(negative.build(), {"'t'", "dimensions overflow"});
  GGUFWriter misaligned;
  misaligned.add_tensor("t", {4}, 0, std::string(16, '\0'), 4);
  expect_open_error(misaligned.build(), {"'t'", "offset 4 is not a multiple of the alignment 32"});
  GGUFWriter beyond;
  beyond.add_tensor("t", {8}, 0, std::string(16, '\0'));
  expect_open_error(beyond.build(), {"'t'", "extends beyond the end of the file"});
  GGUFWriter far;
  far.add_tensor("t", {4}, 0, std::string(16, '\0'), int64_t{1} << 62);
  expect_open_error(far.build(), {"'t'", "extends beyond the end of the file"});
  GGUFWriter partial_block;
  partial_block.add_tensor("t", {100}, 12, std::string(144, '\0'));
  expect_open_error(partial_block.build(), {"'t'", "100 elements is not a whole number of q4_k blocks of 256"});
  GGUFWriter twice;
  twice.add_tensor("t", {4}, 0, std::string(16, '\0'));
  twice.add_tensor("t", {4}, 0, std::string(16, '\0'));
  expect_open_error(twice.build(), {"tensor 't' appears twice"});
}

}  // namespace
}  // namespace ltx
