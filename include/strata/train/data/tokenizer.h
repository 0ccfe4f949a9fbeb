// Byte-level tokeniser: every byte of UTF-8 text is one token, so the
// vocabulary is exactly 256 ids (0..255) and any text round-trips losslessly.
//
// There are no special tokens: documents are plain text and files are joined
// with a newline, which the model learns as an ordinary byte. A model may have
// a larger vocabulary (for example to make it divisible by tp); the extra ids
// are simply never produced. Nothing here blocks; decode() throws ConfigError
// naming the id for one outside [0, 256).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata::train {

constexpr int64_t kByteVocabSize = 256;

std::vector<int64_t> encodeBytes(const std::string& text);
std::string decodeBytes(const std::vector<int64_t>& ids);

}  // namespace strata::train
