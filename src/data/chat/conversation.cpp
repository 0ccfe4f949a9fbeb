#include "data/chat/conversation.h"

#include <array>

#include "strata/error.h"

namespace strata::train::chat {
namespace {

constexpr std::array<const char*, 4> kRoles = {"system", "user", "assistant", "tool"};

bool isBlank(const std::string& text) {
  return text.find_first_not_of(" \t\r\n") == std::string::npos;
}

// "prompt" or "completion": a string (one message of `role`) or messages.
void appendTurn(const nlohmann::ordered_json& line, const char* key, const char* role,
                nlohmann::ordered_json& messages, const std::string& where) {
  const auto& turn = line[key];
  if (turn.is_string()) {
    messages.push_back({{"role", role}, {"content", turn}});
  } else if (turn.is_array()) {
    for (const auto& message : turn) messages.push_back(message);
  } else {
    throw ConfigError(where + ": \"" + key + "\" must be a string or a list of messages, not " +
                      turn.type_name());
  }
}

void checkMessage(const nlohmann::ordered_json& message, size_t index, const std::string& where) {
  const std::string which = where + ": message " + std::to_string(index);
  if (!message.is_object()) throw ConfigError(which + " is not a JSON object");
  auto role = message.find("role");
  if (role == message.end() || !role->is_string())
    throw ConfigError(which + " has no \"role\" string");
  const std::string name = role->get<std::string>();
  bool known = false;
  for (const char* r : kRoles) known = known || name == r;
  if (!known)
    throw ConfigError(which + " has the role '" + name +
                      "'; the roles are system, user, assistant and tool");
  const bool callsTools = message.contains("tool_calls") && !message["tool_calls"].is_null();
  auto content = message.find("content");
  if (content == message.end() || content->is_null()) {
    if (name == "assistant" && callsTools) return;
    throw ConfigError(which + " (" + name + ") has no \"content\"");
  }
  if (!content->is_string())
    throw ConfigError(which + " (" + name + "): \"content\" must be a string, not " +
                      content->type_name() + " (content parts, as for images, are not read)");
  if (name == "assistant" && !callsTools && isBlank(content->get<std::string>()))
    throw ConfigError(which + " is an empty assistant turn: there is nothing to learn from it");
}

}  // namespace

Conversation parseConversation(const std::string& text, const std::string& where) {
  nlohmann::ordered_json line;
  try {
    line = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::ordered_json::exception& e) {
    throw ConfigError(where + ": not a JSON line: " + e.what());
  }
  if (!line.is_object())
    throw ConfigError(where + ": expected a JSON object, got " + std::string(line.type_name()));
  Conversation out;
  out.messages = nlohmann::ordered_json::array();
  if (line.contains("messages")) {
    if (!line["messages"].is_array())
      throw ConfigError(where + ": \"messages\" must be a list of messages");
    out.messages = line["messages"];
  } else if (line.contains("prompt") && line.contains("completion")) {
    appendTurn(line, "prompt", "user", out.messages, where);
    appendTurn(line, "completion", "assistant", out.messages, where);
  } else {
    throw ConfigError(where + ": expected \"messages\", or \"prompt\" and \"completion\"");
  }
  if (out.messages.empty()) throw ConfigError(where + ": the conversation has no messages");
  bool assistant = false;
  for (size_t i = 0; i < out.messages.size(); ++i) {
    checkMessage(out.messages[i], i, where);
    assistant = assistant || out.messages[i]["role"] == "assistant";
  }
  if (!assistant)
    throw ConfigError(
        where + ": the conversation has no assistant turn: there is nothing to learn from it");
  if (line.contains("tools") && !line["tools"].is_null()) {
    if (!line["tools"].is_array()) throw ConfigError(where + ": \"tools\" must be a list");
    out.tools = line["tools"];
  }
  return out;
}

}  // namespace strata::train::chat
