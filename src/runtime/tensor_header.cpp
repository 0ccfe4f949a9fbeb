#include "strata/runtime/tensor_header.h"

#include "strata/error.h"

namespace strata {
namespace {

bool knownDtype(int64_t code) {
  return code >= static_cast<int64_t>(WireDtype::kFloat32) &&
         code <= static_cast<int64_t>(WireDtype::kBool);
}

}  // namespace

int64_t TensorHeader::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<int64_t> TensorHeader::encode() const {
  if (shape.size() > static_cast<size_t>(kMaxDims)) {
    throw ProtocolError("cannot send a tensor with " + std::to_string(shape.size()) +
                        " dimensions; at most " + std::to_string(kMaxDims) + " are supported");
  }
  std::vector<int64_t> words(kWords, 0);
  words[0] = kMagic;
  words[1] = 1;
  words[2] = static_cast<int64_t>(dtype);
  words[3] = static_cast<int64_t>(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) words[4 + i] = shape[i];
  return words;
}

TensorHeader TensorHeader::decode(const int64_t* words, int64_t maxElements,
                                  const std::string& from) {
  auto reject = [&](const std::string& why) {
    throw ProtocolError("malformed tensor header from " + from + ": " + why);
  };
  if (words[0] != kMagic) reject("bad magic (not a Strata peer, or streams out of step)");
  if (words[1] != 1) reject("unsupported header version " + std::to_string(words[1]));
  if (!knownDtype(words[2])) reject("unknown dtype code " + std::to_string(words[2]));
  int64_t ndim = words[3];
  if (ndim < 0 || ndim > kMaxDims) {
    reject(std::to_string(ndim) + " dimensions (at most " + std::to_string(kMaxDims) + ")");
  }
  TensorHeader header;
  header.dtype = static_cast<WireDtype>(words[2]);
  int64_t elements = 1;
  for (int64_t i = 0; i < ndim; ++i) {
    int64_t dim = words[4 + i];
    if (dim < 0)
      reject("negative size " + std::to_string(dim) + " in dimension " + std::to_string(i));
    // Checked before multiplying so the product can never overflow.
    if (dim > 0 && elements > maxElements / dim) {
      reject("more than the limit of " + std::to_string(maxElements) + " elements");
    }
    elements *= dim;
    header.shape.push_back(dim);
  }
  if (elements > maxElements) {
    reject("more than the limit of " + std::to_string(maxElements) + " elements");
  }
  return header;
}

}  // namespace strata
