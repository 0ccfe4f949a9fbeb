#include "strata/train/data/tokenizer.h"

#include "strata/error.h"

namespace strata::train {

std::vector<int64_t> encodeBytes(const std::string& text) {
  std::vector<int64_t> ids;
  ids.reserve(text.size());
  for (char c : text) ids.push_back(static_cast<unsigned char>(c));
  return ids;
}

std::string decodeBytes(const std::vector<int64_t>& ids) {
  std::string text;
  text.reserve(ids.size());
  for (int64_t id : ids) {
    if (id < 0 || id >= kByteVocabSize)
      throw ConfigError("token id " + std::to_string(id) + " is not a byte (vocabulary is 0.." +
                        std::to_string(kByteVocabSize - 1) + ")");
    text.push_back(static_cast<char>(id));
  }
  return text;
}

}  // namespace strata::train
