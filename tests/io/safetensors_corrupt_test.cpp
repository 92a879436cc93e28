// Every malformed safetensors file must produce one ltx::Error naming the file and the problem.
#include <gtest/gtest.h>

#include <optional>

#include "io/safetensors.h"
#include "test_files.h"

namespace ltx {
namespace {

using test::expect_error;

class SafetensorsCorrupt : public ::testing::Test {
 protected:
  // Writes an 8-byte length (header.size() unless overridden), the header text, then `data`.
  std::string make(const std::string& header, const std::string& data = "",
                   std::optional<uint64_t> length = std::nullopt) {
    const uint64_t n = length.value_or(header.size());
    std::string bytes(8, '\0');
    for (int i = 0; i < 8; ++i) bytes[static_cast<size_t>(i)] = static_cast<char>(n >> (8 * i));
    const std::string path = dir_.file("bad" + std::to_string(count_++) + ".safetensors");
    test::write_bytes(path, bytes + header + data);
    return path;
  }
  // A one-tensor header with the given entry.
  std::string make_entry(const std::string& entry, const std::string& data = std::string(16, '\0')) {
    return make(R"({"t":)" + entry + "}", data);
  }
  void expect_open_error(const std::string& path, std::initializer_list<std::string> parts) {
    std::vector<std::string> all(parts);
    all.push_back(path);
    all.push_back("[safetensors]");
    try {
      SafetensorsFile::open(path);
    } catch (const Error& e) {
      for (const auto& p : all) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << p << " in " << e.what();
      return;
    }
    ADD_FAILURE() << "no error for " << path;
  }

  test::TempDir dir_;
  int count_ = 0;
};

TEST_F(SafetensorsCorrupt, ShortFiles) {
  const std::string empty = dir_.file("empty.safetensors");
  test::write_bytes(empty, "");
  expect_open_error(empty, {"0 bytes", "shorter than"});
  const std::string five = dir_.file("five.safetensors");
  test::write_bytes(five, "abcde");
  expect_open_error(five, {"5 bytes", "shorter than"});
}

TEST_F(SafetensorsCorrupt, HeaderLength) {
  expect_open_error(make("{}", "", 1000), {"header length 1000 exceeds the file size"});
  expect_open_error(make("{}", "", int64_t{1} << 40), {"implausibly large"});
  expect_open_error(make("{}", "", ~uint64_t{0} - 1), {"implausibly large"});
}

TEST_F(SafetensorsCorrupt, MalformedJson) {
  const std::string path = make(R"({"t": {"dtype": )");
  expect_error([&] { SafetensorsFile::open(path); }, {path, "malformed JSON"});
  expect_open_error(make(R"([1, 2])"), {"not a JSON object"});
  expect_open_error(make(R"({"t": 5})"), {"entry 't' is not an object"});
  const std::string twice = make(R"({"t":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},)"
                                 R"("t":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}})");
  expect_error([&] { SafetensorsFile::open(twice); }, {twice, "duplicate key \"t\""});
}

TEST_F(SafetensorsCorrupt, MissingAndIllTypedFields) {
  expect_open_error(make_entry(R"({"shape":[4],"data_offsets":[0,16]})"), {"'t'", "missing \"dtype\""});
  expect_open_error(make_entry(R"({"dtype":"F32","data_offsets":[0,16]})"), {"missing \"shape\""});
  expect_open_error(make_entry(R"({"dtype":"F32","shape":[4]})"), {"missing \"data_offsets\""});
  expect_open_error(make_entry(R"({"dtype":7,"shape":[4],"data_offsets":[0,16]})"), {"\"dtype\" must be a string"});
  expect_open_error(make_entry(R"({"dtype":"F32","shape":"4","data_offsets":[0,16]})"), {"\"shape\" must be an array"});
  expect_open_error(make_entry(R"({"dtype":"F32","shape":[4],"data_offsets":0})"), {"\"data_offsets\" must be"});
  expect_open_error(make_entry(R"({"dtype":"F32","shape":[4],"data_offsets":[0,8,16]})"), {"\"data_offsets\" must be"});
  expect_open_error(make_entry(R"({"dtype":"F32","shape":[4],"data_offsets":[-1,16]})"), {"\"data_offsets\" must be"});
  expect_open_error(make(R"({"__metadata__":{"k":1}})"), {"__metadata__", "'k' is not a string"});
  expect_open_error(make(R"({"__metadata__":[1]})"), {"__metadata__", "must be an object"});
}

TEST_F(SafetensorsCorrupt, DTypes) {
  expect_open_error(make_entry(R"({"dtype":"Q9","shape":[4],"data_offsets":[0,16]})"), {"unknown dtype 'Q9'"});
  expect_open_error(make_entry(R"({"dtype":"F64","shape":[2],"data_offsets":[0,16]})"), {"dtype F64 is not supported"});
  expect_open_error(make_entry(R"({"dtype":"F8_E8M0","shape":[16],"data_offsets":[0,16]})"),
                    {"dtype F8_E8M0 is not supported"});
}

TEST_F(SafetensorsCorrupt, Shapes) {
  expect_open_error(make_entry(R"({"dtype":"F32","shape":[-4],"data_offsets":[0,16]})"), {"negative dimension -4"});
  expect_open_error(make_entry(R"({"dtype":"F32","shape":[1.5],"data_offsets":[0,16]})"), {"not an integer"});
  expect_open_error(make_entry(R"({"dtype":"F32","shape":[1,1,1,1,1,1,4],"data_offsets":[0,16]})"), {"rank 7 exceeds"});
  expect_open_error(make_entry(R"({"dtype":"F32","shape":[4294967296,4294967296,16],"data_offsets":[0,16]})"),
                    {"too many elements"});
  expect_open_error(make_entry(R"({"dtype":"F32","shape":[18446744073709551615],"data_offsets":[0,16]})"),
                    {"too many elements"});
  // numel fits in int64 but the byte count overflows.
  expect_open_error(make_entry(R"({"dtype":"I64","shape":[4611686018427387904],"data_offsets":[0,16]})"),
                    {"does not match"});
}

TEST_F(SafetensorsCorrupt, Offsets) {
  expect_open_error(make_entry(R"({"dtype":"F32","shape":[0],"data_offsets":[8,4]})"), {"begin 8 > end 4"});
  expect_open_error(make_entry(R"({"dtype":"F32","shape":[8],"data_offsets":[0,32]})"),
                    {"end 32 is beyond the data section of 16 bytes"});
  expect_open_error(make_entry(R"({"dtype":"F32","shape":[4],"data_offsets":[0,12]})"),
                    {"12 bytes does not match f32[4]"});
  expect_open_error(make(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                         R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                         std::string(16, '\0')),
                    {"'a' and 'b' have overlapping bytes"});
}

TEST_F(SafetensorsCorrupt, MissingTensorNamesFileAndTensor) {
  const std::string path = make_entry(R"({"dtype":"F32","shape":[4],"data_offsets":[0,16]})");
  const auto file = SafetensorsFile::open(path);
  expect_error([&] { file.get("nope"); }, {path, "no tensor named 'nope'"});
}

}  // namespace
}  // namespace ltx
