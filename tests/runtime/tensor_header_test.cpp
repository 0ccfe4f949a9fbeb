#include "strata/runtime/tensor_header.h"

#include <gtest/gtest.h>

#include "strata/error.h"

namespace strata {
namespace {

std::string rejection(std::vector<int64_t> words, int64_t limit = 1000) {
  try {
    TensorHeader::decode(words.data(), limit, "rank 1 of pp");
  } catch (const ProtocolError& e) {
    return e.what();
  }
  return "accepted";
}

std::vector<int64_t> valid() {
  TensorHeader header;
  header.dtype = WireDtype::kBFloat16;
  header.shape = {2, 3, 4};
  return header.encode();
}

TEST(TensorHeader, RoundTrips) {
  std::vector<int64_t> words = valid();
  TensorHeader back = TensorHeader::decode(words.data(), 1000, "peer");
  EXPECT_EQ(back.dtype, WireDtype::kBFloat16);
  EXPECT_EQ(back.shape, (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(back.numel(), 24);
}

TEST(TensorHeader, RejectsMalformedAndAbsurdHeaders) {
  auto words = valid();
  words[0] = 42;
  EXPECT_NE(rejection(words).find("bad magic"), std::string::npos);
  words = valid();
  words[1] = 9;
  EXPECT_NE(rejection(words).find("version 9"), std::string::npos);
  words = valid();
  words[2] = 77;
  EXPECT_NE(rejection(words).find("unknown dtype code 77"), std::string::npos);
  words = valid();
  words[3] = 9;
  EXPECT_NE(rejection(words).find("9 dimensions"), std::string::npos);
  words = valid();
  words[3] = -1;
  EXPECT_NE(rejection(words).find("-1 dimensions"), std::string::npos);
  words = valid();
  words[5] = -3;
  EXPECT_NE(rejection(words).find("negative size -3"), std::string::npos);
  words = valid();
  words[4] = 1000;
  EXPECT_NE(rejection(words).find("limit of 1000 elements"), std::string::npos);
  words = valid();
  words[3] = 8;
  for (int i = 4; i < 12; ++i) words[i] = int64_t{1} << 62;  // would overflow if multiplied
  EXPECT_NE(rejection(words, int64_t{1} << 40).find("limit"), std::string::npos);
  EXPECT_NE(rejection(words).find("rank 1 of pp"), std::string::npos);
}

TEST(TensorHeader, RefusesToEncodeTooManyDims) {
  TensorHeader header;
  header.shape.assign(9, 1);
  EXPECT_THROW(header.encode(), ProtocolError);
}

}  // namespace
}  // namespace strata
