#include "strata/formats/tokenizer_config.h"

#include "formats/json_file.h"
#include "strata/error.h"

namespace strata::formats {
namespace {

// bos_token / eos_token: "text", {"content": "text", ...} or null.
std::optional<std::string> token(const nlohmann::json& config, const char* key,
                                 const std::string& path) {
  auto it = config.find(key);
  if (it == config.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object()) {
    auto content = it->find("content");
    if (content != it->end() && content->is_string()) return content->get<std::string>();
  }
  throw ConfigError(path + ": " + key +
                    ": expected a string, an object with a \"content\" string, or null, got " +
                    it->dump());
}

// The chat template, or the problem with it (kept for the chat reader to
// raise: a tokenizer used for pretraining needs no chat template).
std::optional<std::string> chatTemplate(const nlohmann::json& config, const std::string& path) {
  auto it = config.find("chat_template");
  if (it == config.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  std::string names;
  if (it->is_array()) {
    for (const nlohmann::json& named : *it) {
      if (!named.is_object() || !named.contains("name") || !named["name"].is_string() ||
          !named.contains("template") || !named["template"].is_string())
        throw ConfigError(
            path + ": chat_template: a list entry is not {\"name\": ..., \"template\": ...}");
      if (named["name"] == "default") return named["template"].get<std::string>();
      names += (names.empty() ? "" : ", ") + named["name"].get<std::string>();
    }
    throw ConfigError(
        path + ": chat_template: the list has no template named \"default\" (it has: " + names +
        ")");
  }
  throw ConfigError(path + ": chat_template: expected a string or a list of named templates, got " +
                    it->dump());
}

}  // namespace

TokenizerConfig readTokenizerConfig(const std::string& path) {
  const nlohmann::json config = readJsonFile(path, "tokenizer_config.json");
  if (!config.is_object()) throw ConfigError(path + ": expected a JSON object");
  TokenizerConfig out;
  out.path = path;
  out.bosToken = token(config, "bos_token", path);
  out.eosToken = token(config, "eos_token", path);
  for (const char* key : {"unk_token", "sep_token", "pad_token", "cls_token", "mask_token"})
    if (std::optional<std::string> text = token(config, key, path))
      out.otherTokens.emplace_back(key, *text);
  try {
    out.chatTemplate = chatTemplate(config, path);
  } catch (const ConfigError& error) {
    out.chatTemplateProblem = error.what();
  }
  if (auto it = config.find("add_bos_token"); it != config.end() && !it->is_null()) {
    if (!it->is_boolean())
      throw ConfigError(path + ": add_bos_token: expected true or false, got " + it->dump());
    out.addBosToken = it->get<bool>();
  }
  return out;
}

}  // namespace strata::formats
