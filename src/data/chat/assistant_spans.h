// A conversation rendered by its chat template, with the byte ranges of the
// text that is the assistant's (how they are found: strata/data/chat.h).
// Throws ConfigError prefixed with `where` for what the template refuses and
// for a template whose turns cannot be told apart. Nothing blocks.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "data/chat/conversation.h"

namespace strata::train {
class ChatTemplate;
}

namespace strata::train::chat {

struct RenderedChat {
  std::string text;
  std::vector<std::pair<size_t, size_t>> assistant;  // byte ranges of text, in order
};

// `variables`: what every render gets besides messages, tools and
// add_generation_prompt (the special tokens).
RenderedChat renderWithAssistantSpans(const ChatTemplate& chatTemplate,
                                      const nlohmann::ordered_json& variables,
                                      const Conversation& conversation, const std::string& where);

}  // namespace strata::train::chat
