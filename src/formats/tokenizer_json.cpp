#include "strata/formats/tokenizer_json.h"

#include <climits>
#include <nlohmann/json.hpp>

#include "formats/json_file.h"
#include "strata/error.h"

namespace strata::formats {
namespace {

using nlohmann::json;
using Step = TokenizerJson::PreTokenizerStep;

// Appended to the refusals a SentencePiece-style file meets first.
constexpr const char* kSentencePieceHint =
    " (a SentencePiece-style tokenizer.json, as Llama 2 and Mistral ship, is not byte-level: "
    "load their tokenizer.model instead)";

class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path) {}

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw ConfigError(path_ + ": " + where + ": " + what);
  }

  // The field, or nullptr when it is absent or null.
  const json* find(const json& object, const char* key) const {
    auto it = object.find(key);
    return it == object.end() || it->is_null() ? nullptr : &*it;
  }
  const json& object(const json& value, const std::string& where) const {
    if (!value.is_object()) fail(where, "expected a JSON object, got " + value.dump());
    return value;
  }
  const json& array(const json& value, const std::string& where) const {
    if (!value.is_array()) fail(where, "expected a JSON array");
    return value;
  }
  std::string string(const json& value, const std::string& where) const {
    if (!value.is_string()) fail(where, "expected a string, got " + value.dump());
    return value.get<std::string>();
  }
  bool boolean(const json& object, const char* key, bool absent, const std::string& where) const {
    const json* value = find(object, key);
    if (!value) return absent;
    if (!value->is_boolean())
      fail(where + "." + key, "expected true or false, got " + value->dump());
    return value->get<bool>();
  }
  int64_t id(const json& value, const std::string& where) const {
    if (!value.is_number_integer() || value.get<int64_t>() < 0 || value.get<int64_t>() >= INT32_MAX)
      fail(where, "the id is " + value.dump() + ", not an integer in [0, 2^31 - 1)");
    return value.get<int64_t>();
  }
  // The "type" of a component, for the messages that refuse it.
  std::string type(const json& component, const std::string& where) const {
    const json* type = find(object(component, where), "type");
    if (!type) fail(where, "has no \"type\"");
    return string(*type, where + ".type");
  }

 private:
  std::string path_;
};

void readModel(const Reader& r, const json& file, TokenizerJson& out) {
  const json* modelField = r.find(file, "model");
  if (!modelField)
    r.fail("model",
           "missing: not a Hugging Face tokenizer.json (GPT-2's encoder.json and "
           "vocab.bpe are named by the directory that holds them)");
  const json& model = r.object(*modelField, "model");
  const json* type = r.find(model, "type");
  const std::string kind = type                      ? r.string(*type, "model.type")
                           : r.find(model, "merges") ? "BPE"
                                                     : "";
  if (kind != "BPE")
    r.fail("model.type",
           "\"" + kind +
               "\" is not supported: Strata reads byte-level BPE tokenizer.json files (Llama 3, "
               "GPT-2, Qwen); Unigram and WordPiece models are not supported, and a SentencePiece "
               "model (Llama 2, Mistral) is loaded from its .model file directly");
  if (const json* dropout = r.find(model, "dropout");
      dropout && !(dropout->is_number() && dropout->get<double>() == 0))
    r.fail("model.dropout", dropout->dump() +
                                " is not supported: BPE dropout samples a different split each "
                                "time, and Strata encodes deterministically");
  for (const char* affix : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (const json* value = r.find(model, affix);
        value && !(value->is_string() && value->get<std::string>().empty()))
      r.fail(std::string("model.") + affix,
             value->dump() +
                 " is not supported: a byte-level BPE marks word starts with its "
                 "space character, not with affixes");
  out.ignoreMerges = r.boolean(model, "ignore_merges", false, "model");

  const json* vocab = r.find(model, "vocab");
  if (!vocab || !vocab->is_object() || vocab->empty())
    r.fail("model.vocab", "expected a JSON object mapping each token to its id");
  out.vocab.reserve(vocab->size());
  for (const auto& [token, id] : vocab->items())
    out.vocab.emplace_back(token, r.id(id, "model.vocab[\"" + token + "\"]"));

  const json* merges = r.find(model, "merges");
  if (!merges) r.fail("model.merges", "missing");
  r.array(*merges, "model.merges");
  out.merges.reserve(merges->size());
  for (size_t i = 0; i < merges->size(); ++i) {
    const json& merge = (*merges)[i];
    const std::string where = "model.merges[" + std::to_string(i) + "]";
    if (merge.is_string()) {
      // "left right": exactly one space, which byte-level tokens never hold.
      const std::string text = merge.get<std::string>();
      const size_t space = text.find(' ');
      if (space == std::string::npos || text.find(' ', space + 1) != std::string::npos)
        r.fail(where, "expected two tokens separated by one space, got " + merge.dump());
      out.merges.emplace_back(text.substr(0, space), text.substr(space + 1));
    } else if (merge.is_array() && merge.size() == 2) {
      out.merges.emplace_back(r.string(merge[0], where + "[0]"), r.string(merge[1], where + "[1]"));
    } else {
      r.fail(where, "expected \"left right\" or [\"left\", \"right\"], got " + merge.dump());
    }
  }
}

void readNormalizer(const Reader& r, const json& normalizer, const std::string& where,
                    TokenizerJson& out) {
  const std::string type = r.type(normalizer, where);
  if (type == "NFC") {
    out.normalizer = TokenizerJson::Normalizer::kNfc;
  } else if (type == "Sequence") {
    const json* steps = r.find(normalizer, "normalizers");
    if (!steps) r.fail(where + ".normalizers", "missing");
    r.array(*steps, where + ".normalizers");
    for (size_t i = 0; i < steps->size(); ++i)
      readNormalizer(r, (*steps)[i], where + ".normalizers[" + std::to_string(i) + "]", out);
  } else {
    r.fail(where, "normalizer type \"" + type +
                      "\" is not supported (supported: none, NFC, and a Sequence of NFC)" +
                      kSentencePieceHint);
  }
}

Step readSplit(const Reader& r, const json& split, const std::string& where) {
  Step step;
  step.kind = Step::Kind::kSplit;
  const json* pattern = r.find(split, "pattern");
  if (!pattern) r.fail(where + ".pattern", "missing");
  r.object(*pattern, where + ".pattern");
  if (const json* regex = r.find(*pattern, "Regex")) {
    step.pattern = r.string(*regex, where + ".pattern.Regex");
  } else if (const json* literal = r.find(*pattern, "String")) {
    step.pattern = r.string(*literal, where + ".pattern.String");
    step.patternIsRegex = false;
  } else {
    r.fail(where + ".pattern", "expected {\"Regex\": ...} or {\"String\": ...}");
  }
  const json* behavior = r.find(split, "behavior");
  const std::string name = behavior ? r.string(*behavior, where + ".behavior") : "";
  if (name == "Isolated") {
    step.behavior = TokenizerJson::SplitBehavior::kIsolated;
  } else if (name == "Removed") {
    step.behavior = TokenizerJson::SplitBehavior::kRemoved;
  } else {
    r.fail(where + ".behavior", "\"" + name +
                                    "\" is not supported (supported: Isolated, Removed; not "
                                    "MergedWithPrevious, MergedWithNext or Contiguous)");
  }
  if (r.boolean(split, "invert", false, where))
    r.fail(where + ".invert", "true is not supported (supported: false)");
  return step;
}

void readPreTokenizer(const Reader& r, const json& component, const std::string& where,
                      std::vector<Step>& out) {
  const std::string type = r.type(component, where);
  if (type == "Sequence") {
    const json* steps = r.find(component, "pretokenizers");
    if (!steps) r.fail(where + ".pretokenizers", "missing");
    r.array(*steps, where + ".pretokenizers");
    for (size_t i = 0; i < steps->size(); ++i)
      readPreTokenizer(r, (*steps)[i], where + ".pretokenizers[" + std::to_string(i) + "]", out);
  } else if (type == "Split") {
    out.push_back(readSplit(r, component, where));
  } else if (type == "ByteLevel") {
    Step step;
    step.kind = Step::Kind::kByteLevel;
    // Absent fields take the defaults of Hugging Face's ByteLevel.
    step.addPrefixSpace = r.boolean(component, "add_prefix_space", true, where);
    step.useRegex = r.boolean(component, "use_regex", true, where);
    out.push_back(step);
  } else {
    r.fail(where, "pre-tokenizer type \"" + type +
                      "\" is not supported (supported: Split, ByteLevel, and a Sequence of them)" +
                      kSentencePieceHint);
  }
}

void readPostProcessor(const Reader& r, const json& component, const std::string& where,
                       TokenizerJson& out) {
  const std::string type = r.type(component, where);
  if (type == "ByteLevel") return;  // adjusts offsets only
  if (type == "Sequence") {
    const json* steps = r.find(component, "processors");
    if (!steps) r.fail(where + ".processors", "missing");
    r.array(*steps, where + ".processors");
    for (size_t i = 0; i < steps->size(); ++i)
      readPostProcessor(r, (*steps)[i], where + ".processors[" + std::to_string(i) + "]", out);
    return;
  }
  if (type != "TemplateProcessing")
    r.fail(where, "post-processor type \"" + type +
                      "\" is not supported (supported: none, ByteLevel, TemplateProcessing, and "
                      "a Sequence of them)");
  const json* single = r.find(component, "single");
  const json* special = r.find(component, "special_tokens");
  if (!single) r.fail(where + ".single", "missing");
  r.array(*single, where + ".single");
  // A template applied after another wraps its output.
  std::vector<int64_t> prefix, suffix;
  bool seenText = false;
  for (size_t i = 0; i < single->size(); ++i) {
    const std::string at = where + ".single[" + std::to_string(i) + "]";
    const json& item = r.object((*single)[i], at);
    if (r.find(item, "Sequence")) {
      if (seenText) r.fail(at, "the text appears twice in the template");
      seenText = true;
      continue;
    }
    const json* token = r.find(item, "SpecialToken");
    if (!token) r.fail(at, "expected {\"SpecialToken\": ...} or {\"Sequence\": ...}");
    const std::string name = r.string(r.object(*token, at + ".SpecialToken").value("id", json()),
                                      at + ".SpecialToken.id");
    const json* entry = special ? r.find(*special, name.c_str()) : nullptr;
    if (!entry) r.fail(where + ".special_tokens", "has no entry for \"" + name + "\"");
    const json* ids = r.find(r.object(*entry, where + ".special_tokens." + name), "ids");
    if (!ids) r.fail(where + ".special_tokens." + name + ".ids", "missing");
    r.array(*ids, where + ".special_tokens." + name + ".ids");
    for (const json& id : *ids)
      (seenText ? suffix : prefix).push_back(r.id(id, where + ".special_tokens." + name + ".ids"));
  }
  if (!seenText) r.fail(where + ".single", "the template has no {\"Sequence\": ...} for the text");
  out.templatePrefix.insert(out.templatePrefix.begin(), prefix.begin(), prefix.end());
  out.templateSuffix.insert(out.templateSuffix.end(), suffix.begin(), suffix.end());
}

void readAddedTokens(const Reader& r, const json& file, TokenizerJson& out) {
  const json* added = r.find(file, "added_tokens");
  if (!added) return;
  r.array(*added, "added_tokens");
  for (size_t i = 0; i < added->size(); ++i) {
    const std::string where = "added_tokens[" + std::to_string(i) + "]";
    const json& entry = r.object((*added)[i], where);
    TokenizerJson::AddedToken token;
    const json* id = r.find(entry, "id");
    const json* content = r.find(entry, "content");
    if (!id || !content) r.fail(where, "expected an \"id\" and a \"content\"");
    token.id = r.id(*id, where + ".id");
    token.content = r.string(*content, where + ".content");
    if (token.content.empty()) r.fail(where + ".content", "empty");
    token.special = r.boolean(entry, "special", false, where);
    token.lstrip = r.boolean(entry, "lstrip", false, where);
    token.rstrip = r.boolean(entry, "rstrip", false, where);
    token.singleWord = r.boolean(entry, "single_word", false, where);
    token.normalized = r.boolean(entry, "normalized", !token.special, where);
    out.addedTokens.push_back(std::move(token));
  }
}

}  // namespace

TokenizerJson readTokenizerJson(const std::string& path) {
  const json file = readJsonFile(path, "tokenizer.json");
  const Reader r(path);
  if (!file.is_object()) r.fail("the top level", "expected a JSON object");
  TokenizerJson out;
  out.path = path;
  readModel(r, file, out);
  if (const json* normalizer = r.find(file, "normalizer"))
    readNormalizer(r, *normalizer, "normalizer", out);
  if (const json* preTokenizer = r.find(file, "pre_tokenizer"))
    readPreTokenizer(r, *preTokenizer, "pre_tokenizer", out.preTokenizer);
  size_t byteLevel = 0;
  for (const Step& step : out.preTokenizer) byteLevel += step.kind == Step::Kind::kByteLevel;
  if (byteLevel != 1 || out.preTokenizer.back().kind != Step::Kind::kByteLevel)
    r.fail("pre_tokenizer",
           std::string(byteLevel == 0 ? "has no ByteLevel step" : "has a step after ByteLevel") +
               ": Strata reads byte-level BPE tokenizer.json files, whose pre-tokenizer ends with "
               "one ByteLevel" +
               kSentencePieceHint);
  if (const json* postProcessor = r.find(file, "post_processor"))
    readPostProcessor(r, *postProcessor, "post_processor", out);
  if (const json* decoder = r.find(file, "decoder");
      decoder && r.type(*decoder, "decoder") != "ByteLevel")
    r.fail("decoder", "type \"" + r.type(*decoder, "decoder") +
                          "\" is not supported (a byte-level BPE decodes with ByteLevel)");
  readAddedTokens(r, file, out);
  return out;
}

}  // namespace strata::formats
