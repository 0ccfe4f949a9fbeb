// A model's chat template: the Jinja template in its tokenizer_config.json
// (or chat_template.jinja) that turns a conversation into the text the model
// was trained on, rendered as transformers' apply_chat_template renders it.
//
// Debian has no Jinja engine for C++, so Strata implements the part of Jinja
// that chat templates use (Llama 3's, Mistral's, Qwen 2.5's and SmolLM 2's
// among them), under the settings transformers uses (trim_blocks,
// lstrip_blocks, loop controls): text, {{ }} and {% %} with whitespace
// control, {# #} comments; if/elif/else, for (with loop.*, a filter, else,
// unpacking), set (names, namespace attributes, the block form), break,
// continue, and transformers' {% generation %}; literals, lists, dicts,
// attribute and item access, slices, calls with keyword arguments; Python's
// operators; the filters default, trim, tojson, length, list, string,
// lower, upper, capitalize, title, join, first, last, reverse, items,
// select(attr), reject(attr), map, replace, int, float, abs, safe; the tests
// defined, none, string, number, mapping, iterable, equalto, in, even, odd
// and kin; str's strip/split/startswith/endswith/lower/upper/replace and
// dict's get/items/keys/values; the globals raise_exception, namespace,
// dict, range, and transformers' strftime_now(format), which formats the
// render's date (today, local time, as transformers does, unless the caller
// fixes one, so that prepared data need not depend on the day). Anything
// else is refused by name when the template is read or rendered, never
// guessed at.
//
// The constructor throws ConfigError "<origin>:<line>: ..." for a template it
// cannot read; render() throws ConfigError the same way for a template that
// fails (an undefined name used, a type error) and "<origin>: the template
// refused the conversation: <message>" for raise_exception. Immutable once
// built: render() may run on several threads at once. Nothing blocks.
#pragma once

#include <cstddef>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <utility>
#include <vector>

namespace strata::train {

namespace jinja {
struct Stmt;
}

// Throws ConfigError naming `date` unless it is empty or YYYY-MM-DD, the
// dates render() takes.
void checkChatDate(const std::string& date);

class ChatTemplate {
 public:
  // `origin` names the template in errors (a file, or "chat_template of F").
  ChatTemplate(const std::string& source, std::string origin);
  ~ChatTemplate();
  ChatTemplate(ChatTemplate&&) noexcept;

  struct Output {
    std::string text;
    // Byte ranges of `text` that {% generation %} blocks wrote, in order.
    std::vector<std::pair<size_t, size_t>> generation;
  };
  // Renders with `variables`, a JSON object whose entries become the
  // template's variables (messages, add_generation_prompt, bos_token, ...);
  // strftime_now formats `date` ("YYYY-MM-DD"; empty: now).
  Output render(const nlohmann::ordered_json& variables, const std::string& date = "") const;

  // Whether the template marks the assistant's text with {% generation %}.
  bool marksGeneration() const { return marksGeneration_; }
  const std::string& origin() const { return origin_; }

 private:
  std::string origin_;
  std::vector<std::unique_ptr<jinja::Stmt>> body_;
  bool marksGeneration_ = false;
};

}  // namespace strata::train
