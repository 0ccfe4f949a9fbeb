#include <filesystem>

#include "data/chat/assistant_spans.h"
#include "data/chat/conversation.h"
#include "strata/data/chat.h"
#include "strata/data/chat_template.h"
#include "strata/data/hf_tokenizer.h"
#include "strata/data/text_dataset.h"
#include "strata/error.h"
#include "strata/formats/tokenizer_config.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;

fs::path tokenizerFile(const std::string& spec) {
  fs::path path(spec);
  if (fs::is_directory(path)) path /= "tokenizer.json";
  if (path.extension() != ".json" || !fs::is_regular_file(path))
    throw ConfigError(
        "chat data needs a Hugging Face tokenizer.json (its added tokens turn the chat template's "
        "special tokens into ids); '" +
        spec + "' is not one, nor a folder holding one");
  return path;
}

// The chat template: `templateFile`, else the folder's chat_template.jinja,
// else tokenizer_config.json's chat_template.
std::unique_ptr<const ChatTemplate> findTemplate(const fs::path& folder,
                                                 const std::string& templateFile,
                                                 const formats::TokenizerConfig* config) {
  if (!templateFile.empty())
    return std::make_unique<const ChatTemplate>(readTextFiles({templateFile}), templateFile);
  const fs::path jinjaFile = folder / "chat_template.jinja";
  if (fs::is_regular_file(jinjaFile))
    return std::make_unique<const ChatTemplate>(readTextFiles({jinjaFile.string()}),
                                                jinjaFile.string());
  if (config && !config->chatTemplateProblem.empty())
    throw ConfigError(config->chatTemplateProblem);
  if (config && config->chatTemplate)
    return std::make_unique<const ChatTemplate>(*config->chatTemplate,
                                                "chat_template of " + config->path);
  throw ConfigError(folder.string() +
                    " has no chat template (neither chat_template.jinja nor a chat_template in "
                    "tokenizer_config.json): name one with --chat-template FILE");
}

// Byte offsets of each token in `text`: where its decoded bytes start.
std::vector<size_t> tokenOffsets(const HfTokenizer& tokenizer, const std::vector<int64_t>& ids,
                                 const std::string& text, const std::string& where) {
  std::vector<size_t> offsets;
  offsets.reserve(ids.size());
  size_t at = 0;
  for (int64_t id : ids) {
    offsets.push_back(at);
    const std::string piece = tokenizer.decode({id});
    if (text.compare(at, piece.size(), piece) != 0)
      throw ConfigError(
          where + ": the tokenizer does not give the rendered text back byte for byte at byte " +
          std::to_string(at) +
          " (it normalizes the text?), so the assistant's tokens cannot be found");
    at += piece.size();
  }
  if (at != text.size())
    throw ConfigError(where + ": the tokenizer's ids cover " + std::to_string(at) +
                      " of the rendered text's " + std::to_string(text.size()) + " bytes");
  return offsets;
}

}  // namespace

ChatEncoder::ChatEncoder(const std::string& tokenizer, const std::string& templateFile,
                         std::string date)
    : date_(std::move(date)) {
  checkChatDate(date_);
  const fs::path file = tokenizerFile(tokenizer);
  tokenizer_ = std::make_unique<const HfTokenizer>(file.string());
  std::optional<formats::TokenizerConfig> config;
  if (const fs::path beside = file.parent_path() / "tokenizer_config.json";
      fs::is_regular_file(beside))
    config = formats::readTokenizerConfig(beside.string());
  template_ = findTemplate(file.parent_path(), templateFile, config ? &*config : nullptr);
  if (config) {
    if (config->bosToken) specialTokens_.emplace_back("bos_token", *config->bosToken);
    if (config->eosToken) specialTokens_.emplace_back("eos_token", *config->eosToken);
    specialTokens_.insert(specialTokens_.end(), config->otherTokens.begin(),
                          config->otherTokens.end());
  }
}

ChatEncoder::~ChatEncoder() = default;

ChatTokens ChatEncoder::encode(const std::string& jsonLine, const std::string& where) const {
  const chat::Conversation conversation = chat::parseConversation(jsonLine, where);
  nlohmann::ordered_json variables = nlohmann::ordered_json::object();
  for (const auto& [name, text] : specialTokens_) variables[name] = text;
  chat::RenderedChat rendered =
      chat::renderWithAssistantSpans(*template_, variables, conversation, where, date_);
  ChatTokens out;
  try {
    out.ids = tokenizer_->encode(rendered.text, HfTokenizer::AddedTokens::kRecognised);
  } catch (const ConfigError& error) {
    throw ConfigError(where + ": " + error.what());
  }
  const std::vector<size_t> offsets = tokenOffsets(*tokenizer_, out.ids, rendered.text, where);
  // A token is the assistant's when any of its bytes is in a turn (a token
  // may join the end of the prompt to the first character of the answer).
  out.assistant.assign(out.ids.size(), 0);
  size_t span = 0;
  for (size_t k = 0; k < out.ids.size(); ++k) {
    const size_t end = k + 1 < offsets.size() ? offsets[k + 1] : rendered.text.size();
    while (span < rendered.assistant.size() && rendered.assistant[span].second <= offsets[k])
      ++span;
    if (span < rendered.assistant.size() && rendered.assistant[span].first < end)
      out.assistant[k] = 1;
  }
  out.text = std::move(rendered.text);
  return out;
}

}  // namespace strata::train
