// Conversations for supervised fine-tuning, rendered and tokenized as the
// model saw them, with the tokens that are the assistant's marked: only
// those count in the loss when data.loss_on = "assistant".
//
// A conversation is one JSON line, in the formats Hugging Face datasets,
// TRL and torchtitan use:
//   {"messages": [{"role": "user", "content": "..."}, ...], "tools": [...]?}
//   {"prompt": "...", "completion": "..."}  (a user and an assistant turn;
//     each may also be a list of messages)
// Roles are system, user, assistant and tool; content is a string (an
// assistant turn that calls tools may have none). Other fields of a message
// (tool_calls, tool_call_id, ...) reach the template as they are.
//
// The chat format is the tokenizer folder's: its chat template
// (chat_template.jinja, else tokenizer_config.json's chat_template: a string,
// or a list of named templates of which "default" is used; a template file
// given explicitly wins) rendered by ChatTemplate (chat_template.h) with the
// variables transformers gives it (messages, tools, documents,
// add_generation_prompt = false, and the config's bos/eos/unk/sep/pad/cls/
// mask tokens). The text is tokenized whole with the added tokens split out,
// as apply_chat_template(tokenize=True) does, so the ids are transformers'.
//
// Which text is the assistant's: a template that marks it with
// {% generation %} says so itself. Otherwise, for each assistant message,
// the conversation up to it is rendered twice, once with its content
// marked; where the two first differ its content starts, and from there to
// the end is its turn (the content and the end-of-turn text after it:
// Llama 3's "...<|eot_id|>", ChatML's "...<|im_end|>\n", Mistral's "...</s>").
// The turn is then where that rendering puts it in the whole conversation,
// or, for a template that moves earlier text once more messages follow
// (Mistral 7B v0.3 puts the system message before the last user turn), the
// first place after the previous turn where its text is. A token is the
// assistant's when any of its bytes is in a turn: a token that joins the
// prompt's last character to the answer's first is the model's to produce.
// No add_generation_prompt is needed, so templates that ignore it work.
//
// Throws ConfigError naming the file and line for: a line that is not
// JSON, not an object, without "messages" (or "prompt" and "completion"),
// a message that is not an object, lacks a role or content, has a role not
// listed above, an empty assistant turn, a conversation without an
// assistant turn, what the template refuses (its own message), and text the
// tokenizer does not give back byte for byte, and a template that does not
// write an assistant's content where it can be found. Nothing blocks; a ChatEncoder
// is immutable, so encode() may run on several threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace strata::train {

class ChatTemplate;
class HfTokenizer;

struct ChatTokens {
  std::vector<int64_t> ids;
  std::vector<uint8_t> assistant;  // [ids.size()], 1 where the token is the assistant's
  std::string text;                // the rendered conversation
};

class ChatEncoder {
 public:
  // `tokenizer`: a tokenizer.json or the folder holding one; `templateFile`:
  // a Jinja file to use instead of the folder's chat template (empty: the
  // folder's). Throws ConfigError for a tokenizer that is not a tokenizer.json
  // (only its added tokens turn the template's special-token text into ids),
  // and for a folder without a chat template.
  // `date` ("YYYY-MM-DD") is what the template's strftime_now formats
  // (empty: today, as transformers does).
  explicit ChatEncoder(const std::string& tokenizer, const std::string& templateFile = "",
                       std::string date = "");
  ~ChatEncoder();

  // One JSON line; `where` ("FILE:LINE (byte offset N)") prefixes errors.
  ChatTokens encode(const std::string& jsonLine, const std::string& where) const;

  const HfTokenizer& tokenizer() const { return *tokenizer_; }
  const ChatTemplate& chatTemplate() const { return *template_; }

 private:
  std::unique_ptr<const HfTokenizer> tokenizer_;
  std::unique_ptr<const ChatTemplate> template_;
  std::vector<std::pair<std::string, std::string>>
      specialTokens_;  // name -> text, as the config gives them
  std::string date_;   // strftime_now's; empty: today
};

}  // namespace strata::train
