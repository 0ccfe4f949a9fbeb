// JSON values under store keys, as the launchers exchange them. set/get
// block as c10d::Store's do (get waits for the key up to the store's timeout)
// and throw what they throw; a malformed value throws nlohmann's parse_error.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <vector>

namespace strata {

inline void putJson(c10d::Store& store, const std::string& key, const nlohmann::json& value) {
  std::string text = value.dump();
  store.set(key, std::vector<uint8_t>(text.begin(), text.end()));
}

inline nlohmann::json takeJson(c10d::Store& store, const std::string& key) {
  std::vector<uint8_t> bytes = store.get(key);
  return nlohmann::json::parse(bytes.begin(), bytes.end());
}

}  // namespace strata
