// The small header sent ahead of a tensor whose shape the receiver does not know.
//
// Wire form: kWords int64 values [magic, version, dtype, ndim, dim0..dim7].
// decode() is the only gate between a peer's bytes and an allocation: it throws
// ProtocolError for a wrong magic or version, an unknown dtype, more than
// kMaxDims dimensions, a negative dimension, or more elements than the
// receiver's limit — never a huge allocation or a crash. Nothing blocks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata {

// Stable wire codes, independent of LibTorch's ScalarType numbering.
enum class WireDtype : int64_t {
  kFloat32 = 1,
  kFloat64 = 2,
  kFloat16 = 3,
  kBFloat16 = 4,
  kInt64 = 5,
  kInt32 = 6,
  kInt8 = 7,
  kUInt8 = 8,
  kBool = 9,
};

struct TensorHeader {
  static constexpr int64_t kMagic = 0x5354524154410001;  // "STRATA" + format 1
  static constexpr int kMaxDims = 8;
  static constexpr int kWords = 4 + kMaxDims;

  WireDtype dtype = WireDtype::kFloat32;
  std::vector<int64_t> shape;

  int64_t numel() const;
  std::vector<int64_t> encode() const;
  // Throws ProtocolError naming the bad field; `from` names the peer for the message.
  static TensorHeader decode(const int64_t* words, int64_t maxElements, const std::string& from);
};

}  // namespace strata
