// Hugging Face's tokenizer_config.json, the file beside tokenizer.json that
// names a checkpoint's special tokens for the transformers library: only the
// part a training pipeline needs, bos_token, eos_token and add_bos_token.
// A token is written either as its text or as an object whose "content" is
// the text (transformers' serialised AddedToken); null means none.
//
// readTokenizerConfig() throws ConfigError naming the file for one that
// cannot be read or is not a JSON object, and for a bos_token, eos_token or
// add_bos_token of the wrong type. Nothing blocks.
#pragma once

#include <optional>
#include <string>

namespace strata::formats {

struct TokenizerConfig {
  std::string path;  // where it was read from, for messages
  std::optional<std::string> bosToken, eosToken;
  std::optional<bool> addBosToken;  // absent: not said
};

TokenizerConfig readTokenizerConfig(const std::string& path);

}  // namespace strata::formats
