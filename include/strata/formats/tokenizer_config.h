// Hugging Face's tokenizer_config.json, the file beside tokenizer.json that
// names a checkpoint's special tokens for the transformers library: only the
// part a training pipeline needs: the special tokens (bos_token, eos_token,
// and unk/sep/pad/cls/mask_token, which chat templates may use),
// add_bos_token, and chat_template: a string, or a list of {"name",
// "template"} objects of which the one named "default" is taken.
// A token is written either as its text or as an object whose "content" is
// the text (transformers' serialised AddedToken); null means none.
//
// readTokenizerConfig() throws ConfigError naming the file for one that
// cannot be read or is not a JSON object, for a special token or
// add_bos_token of the wrong type. A chat_template that is neither a string
// nor a list of named templates with a "default" is not an error here (a
// tokenizer needs no template): chatTemplateProblem says what is wrong with
// it, naming the templates it has. Nothing blocks.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace strata::formats {

struct TokenizerConfig {
  std::string path;  // where it was read from, for messages
  std::optional<std::string> bosToken, eosToken;
  std::optional<bool> addBosToken;  // absent: not said
  // The other special tokens the file names, in this order: unk, sep, pad,
  // cls, mask ("unk_token" -> "<unk>").
  std::vector<std::pair<std::string, std::string>> otherTokens;
  std::optional<std::string> chatTemplate;
  std::string chatTemplateProblem;  // empty when chatTemplate is usable or absent
};

TokenizerConfig readTokenizerConfig(const std::string& path);

}  // namespace strata::formats
