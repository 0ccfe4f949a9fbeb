// One conversation read from a JSON line and checked (the formats and the
// rules are in strata/data/chat.h): messages as the template receives them,
// and the tools the line offers, if any. Throws ConfigError prefixed with
// `where` for every rule it breaks. Nothing blocks.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace strata::train::chat {

struct Conversation {
  nlohmann::ordered_json messages;  // an array of message objects
  nlohmann::ordered_json tools;     // an array, or null
};

Conversation parseConversation(const std::string& line, const std::string& where);

}  // namespace strata::train::chat
