#include "sha256.h"

#include <gtest/gtest.h>

#include <string>

#include "strata/error.h"

namespace strata {
namespace {

// FIPS 180-4 example vectors.
TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, MillionAs) {
  EXPECT_EQ(sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Pieces of uneven sizes, some crossing the 64-byte block boundary and one
// empty, hash to the same digest as the whole text at once.
TEST(Sha256, ChunkedUpdatesEqualOneShot) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += static_cast<char>('a' + i * 7 % 26);
  Sha256 chunked;
  size_t done = 0;
  for (size_t piece : {1, 0, 63, 64, 65, 200, 7}) {
    chunked.update(text.data() + done, piece);
    done += piece;
  }
  chunked.update(std::string_view(text).substr(done));
  EXPECT_EQ(chunked.hexDigest(), sha256Hex(text));
}

TEST(Sha256, UseAfterTheDigestIsAnError) {
  Sha256 hash;
  hash.update("abc");
  hash.hexDigest();
  EXPECT_THROW(hash.update("d"), Error);
  EXPECT_THROW(hash.hexDigest(), Error);
}

}  // namespace
}  // namespace strata
