#include "strata/data/tiktoken_hugging_face.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>
#include <vector>

namespace strata::train {
namespace {

// Keys sorted (std::map): the vocabulary is 128000 entries, which an
// ordered object would look up one by one.
using json = nlohmann::json;

// Every cut of each token of two or more bytes into two tokens, in rank
// order, the shorter left part first: [left, right] spelled.
json everyCutAsMerges(const TiktokenBpe& tokenizer, const std::vector<std::string>& spelled) {
  // Ranks by bytes, to tell whether a part is a token.
  std::unordered_map<std::string, int64_t> rankOf;
  std::vector<std::string> bytes(tokenizer.rankCount());
  for (int64_t rank = 0; rank < tokenizer.rankCount(); ++rank) {
    bytes[rank] = tokenizer.rankBytes(rank);
    rankOf.emplace(bytes[rank], rank);
  }
  json merges = json::array();
  for (int64_t rank = 0; rank < tokenizer.rankCount(); ++rank) {
    const std::string& token = bytes[rank];
    for (size_t cut = 1; cut < token.size(); ++cut) {
      auto left = rankOf.find(token.substr(0, cut));
      if (left == rankOf.end()) continue;
      auto right = rankOf.find(token.substr(cut));
      if (right == rankOf.end()) continue;
      merges.push_back(json::array({spelled[left->second], spelled[right->second]}));
    }
  }
  return merges;
}

json bpeModel(const TiktokenBpe& tokenizer) {
  std::vector<std::string> spelled(tokenizer.rankCount());
  json vocab = json::object();
  for (int64_t rank = 0; rank < tokenizer.rankCount(); ++rank) {
    spelled[rank] = byteLevelSpelling(tokenizer.rankBytes(rank));
    vocab[spelled[rank]] = rank;
  }
  return {{"type", "BPE"},
          {"dropout", nullptr},
          {"unk_token", nullptr},
          {"continuing_subword_prefix", nullptr},
          {"end_of_word_suffix", nullptr},
          {"fuse_unk", false},
          {"byte_fallback", false},
          {"ignore_merges", true},
          {"vocab", std::move(vocab)},
          {"merges", everyCutAsMerges(tokenizer, spelled)}};
}

json addedTokens(const TiktokenBpe& tokenizer) {
  json added = json::array();
  int64_t id = tokenizer.rankCount();
  for (const std::string& name : tokenizer.specialTokens()) {
    added.push_back({{"id", id++},
                     {"content", name},
                     {"single_word", false},
                     {"lstrip", false},
                     {"rstrip", false},
                     {"normalized", false},
                     {"special", true}});
  }
  return added;
}

json preTokenizer(const TiktokenBpe& tokenizer) {
  json split = {{"type", "Split"},
                {"pattern", {{"Regex", tokenizer.pattern()}}},
                {"behavior", "Isolated"},
                {"invert", false}};
  json byteLevel = {{"type", "ByteLevel"},
                    {"add_prefix_space", false},
                    {"trim_offsets", true},
                    {"use_regex", false}};
  return {{"type", "Sequence"}, {"pretokenizers", json::array({split, byteLevel})}};
}

std::string nameOf(const TiktokenBpe& tokenizer, std::optional<int64_t> id) {
  return id ? tokenizer.specialTokens().at(*id - tokenizer.rankCount()) : std::string();
}

}  // namespace

std::string tiktokenTokenizerJson(const TiktokenBpe& tokenizer) {
  json file = {{"version", "1.0"},
               {"truncation", nullptr},
               {"padding", nullptr},
               {"added_tokens", addedTokens(tokenizer)},
               {"normalizer", nullptr},
               {"pre_tokenizer", preTokenizer(tokenizer)},
               {"post_processor", nullptr},
               {"decoder",
                {{"type", "ByteLevel"},
                 {"add_prefix_space", true},
                 {"trim_offsets", true},
                 {"use_regex", true}}},
               {"model", bpeModel(tokenizer)}};
  return file.dump() + "\n";
}

std::string tiktokenTokenizerConfigJson(const TiktokenBpe& tokenizer) {
  json config = {{"tokenizer_class", "PreTrainedTokenizerFast"},
                 {"clean_up_tokenization_spaces", false}};
  if (tokenizer.beginOfTextId()) config["bos_token"] = nameOf(tokenizer, tokenizer.beginOfTextId());
  if (tokenizer.endOfTextId()) config["eos_token"] = nameOf(tokenizer, tokenizer.endOfTextId());
  return config.dump(2) + "\n";
}

}  // namespace strata::train
