#include "data/chat/assistant_spans.h"

#include "strata/data/chat_template.h"
#include "strata/error.h"

namespace strata::train::chat {
namespace {

// Prepended to an assistant's content to find where the template writes
// it: a control character no template trims or rewrites.
constexpr char kMarker[] = "\x01";

// What every render of one conversation shares.
struct Renderer {
  const ChatTemplate& chatTemplate;
  const nlohmann::ordered_json& variables;  // the special tokens
  const nlohmann::ordered_json& tools;
  const std::string& where;
  const std::string& date;

  std::string operator()(const nlohmann::ordered_json& messages, bool generationPrompt = false,
                         std::vector<std::pair<size_t, size_t>>* generation = nullptr) const {
    nlohmann::ordered_json all = variables;
    all["messages"] = messages;
    all["tools"] = tools;
    all["documents"] = nullptr;
    all["add_generation_prompt"] = generationPrompt;
    try {
      ChatTemplate::Output out = chatTemplate.render(all, date);
      if (generation) *generation = std::move(out.generation);
      return std::move(out.text);
    } catch (const ConfigError& error) {
      throw ConfigError(where + ": " + error.what());
    }
  }
};

struct Turn {
  std::string text;   // from the assistant's content to the end of its turn
  size_t offset = 0;  // where it starts in the conversation up to it
  std::string upTo;   // the conversation up to and with the turn
};

size_t commonSuffix(const std::string& a, size_t aEnd, const std::string& b, size_t cap) {
  size_t n = 0;
  while (n < cap && n < aEnd && n < b.size() && a[aEnd - 1 - n] == b[b.size() - 1 - n]) ++n;
  return n;
}

// Where the turn starts in `upTo`, its content starting at `content`: after
// the prompt, the conversation before the message rendered with the
// generation prompt. Where that is not how `upTo` begins (the template moved
// text), the place at most kReach bytes before the content where the most
// of the prompt's end matches, the latest of equals.
size_t turnStart(const std::string& upTo, size_t content, const std::string& prompt) {
  if (prompt.size() <= content && upTo.compare(0, prompt.size(), prompt) == 0) return prompt.size();
  constexpr size_t kReach = 1024, kCap = 4096;
  size_t best = content, bestLength = 0;
  for (size_t p = content + 1; p-- > (content > kReach ? content - kReach : 0);) {
    const size_t length = commonSuffix(upTo, p, prompt, kCap);
    if (length > bestLength) {
      best = p;
      bestLength = length;
    }
  }
  return best;
}

// The turn of assistant message `index`, rendered as the last message. The
// conversation up to it, rendered again with its content marked, differs
// from the plain one first where the content starts; the turn runs from the
// end of the prompt before it (turnStart) to the end: the template's text
// before the content (Mistral's space), the content, and the end-of-turn
// text after it.
Turn assistantTurn(const Renderer& render, const Conversation& conversation, size_t index) {
  const std::string which = render.where + ": message " + std::to_string(index) + " (assistant)";
  if (index == 0)
    throw ConfigError(which + " opens the conversation: the model has nothing to answer");
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  for (size_t i = 0; i <= index; ++i) messages.push_back(conversation.messages[i]);
  Turn turn;
  turn.upTo = render(messages);
  nlohmann::ordered_json& last = messages.back();
  last["content"] = kMarker + (last.contains("content") && last["content"].is_string()
                                   ? last["content"].get<std::string>()
                                   : std::string());
  const std::string marked = render(messages);
  size_t start = 0;
  while (start < turn.upTo.size() && start < marked.size() && turn.upTo[start] == marked[start])
    ++start;
  if (marked.compare(start, 1, kMarker) != 0 || start == turn.upTo.size())
    throw ConfigError(
        which + ": " + render.chatTemplate.origin() +
        " does not write the message's content where Strata can find it; mark the assistant's "
        "text with {% generation %} in the template");
  messages.erase(messages.size() - 1);
  const std::string prompt = render(messages, true);
  turn.offset = turnStart(turn.upTo, start, prompt);
  turn.text = turn.upTo.substr(turn.offset);
  return turn;
}

}  // namespace

RenderedChat renderWithAssistantSpans(const ChatTemplate& chatTemplate,
                                      const nlohmann::ordered_json& variables,
                                      const Conversation& conversation, const std::string& where,
                                      const std::string& date) {
  const Renderer render{chatTemplate, variables, conversation.tools, where, date};
  RenderedChat out;
  out.text = render(conversation.messages, false, &out.assistant);
  if (chatTemplate.marksGeneration()) return out;
  size_t cursor = 0;
  for (size_t i = 0; i < conversation.messages.size(); ++i) {
    if (conversation.messages[i]["role"] != "assistant") continue;
    const Turn turn = assistantTurn(render, conversation, i);
    // Where the whole text begins with the conversation up to this turn, the
    // turn is where it is there; else (a template that moves text, such as a
    // system message put before the last user turn) the first place after
    // the previous turn.
    const bool prefix =
        out.text.compare(0, turn.upTo.size(), turn.upTo) == 0 && turn.offset >= cursor;
    const size_t at = prefix ? turn.offset : out.text.find(turn.text, cursor);
    if (at == std::string::npos)
      throw ConfigError(
          where + ": message " + std::to_string(i) +
          " (assistant): its turn, as the template renders it last, is not in the whole "
          "conversation's text; mark the assistant's text with {% generation %} in the template");
    out.assistant.emplace_back(at, at + turn.text.size());
    cursor = at + turn.text.size();
  }
  return out;
}

}  // namespace strata::train::chat
