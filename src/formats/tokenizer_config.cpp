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

}  // namespace

TokenizerConfig readTokenizerConfig(const std::string& path) {
  const nlohmann::json config = readJsonFile(path, "tokenizer_config.json");
  if (!config.is_object()) throw ConfigError(path + ": expected a JSON object");
  TokenizerConfig out;
  out.path = path;
  out.bosToken = token(config, "bos_token", path);
  out.eosToken = token(config, "eos_token", path);
  if (auto it = config.find("add_bos_token"); it != config.end() && !it->is_null()) {
    if (!it->is_boolean())
      throw ConfigError(path + ": add_bos_token: expected true or false, got " + it->dump());
    out.addBosToken = it->get<bool>();
  }
  return out;
}

}  // namespace strata::formats
