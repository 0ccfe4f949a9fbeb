#include "strata/data/gpt2_bpe.h"

#include <unicode/uchar.h>

#include <climits>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "strata/error.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;

// One decoded UTF-8 sequence: its code point and length in bytes, or length
// 0 when the bytes at `pos` are not well-formed UTF-8.
struct CodePoint {
  char32_t value = 0;
  size_t length = 0;
};

CodePoint decodeUtf8(std::string_view s, size_t pos) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char b0 = byte(pos);
  if (b0 < 0x80) return {b0, 1};
  size_t length;
  char32_t value, min;
  if ((b0 & 0xE0) == 0xC0) {
    length = 2, value = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    length = 3, value = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    length = 4, value = b0 & 0x07, min = 0x10000;
  } else {
    return {};
  }
  if (pos + length > s.size()) return {};
  for (size_t i = 1; i < length; ++i) {
    if ((byte(pos + i) & 0xC0) != 0x80) return {};
    value = (value << 6) | (byte(pos + i) & 0x3F);
  }
  if (value < min || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) return {};
  return {value, length};
}

// The four classes GPT-2's pattern tells apart.
enum class CharClass { kLetter, kNumber, kSpace, kOther };

// \s as tiktoken's and Hugging Face's engines read it: Unicode's White_Space
// (tab to carriage return, U+0085, U+00A0, the Zs space separators, U+2028,
// U+2029), not U+FEFF, which JavaScript's \s includes.
bool isSpace(char32_t c) { return u_isUWhiteSpace(static_cast<UChar32>(c)); }

CharClass classify(char32_t c) {
  if (c < 0x80) {  // the common case, without a table look-up
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return CharClass::kLetter;
    if (c >= '0' && c <= '9') return CharClass::kNumber;
    if (c == ' ' || (c >= '\t' && c <= '\r')) return CharClass::kSpace;
    return CharClass::kOther;
  }
  const uint32_t mask = U_GET_GC_MASK(static_cast<UChar32>(c));
  if (mask & U_GC_L_MASK) return CharClass::kLetter;
  if (mask & U_GC_N_MASK) return CharClass::kNumber;
  if (isSpace(c)) return CharClass::kSpace;
  return CharClass::kOther;
}

std::ifstream openOrThrow(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw ConfigError(path + ": cannot open " + what + (fs::exists(path) ? "" : " (no such file)"));
  return in;
}

}  // namespace

std::vector<std::pair<size_t, size_t>> gpt2Pretokenize(std::string_view text) {
  // Decode once: each character's code point, class and byte offset.
  std::vector<char32_t> cps;
  std::vector<CharClass> classes;
  std::vector<size_t> offsets;
  cps.reserve(text.size());
  classes.reserve(text.size());
  offsets.reserve(text.size() + 1);
  for (size_t pos = 0; pos < text.size();) {
    const CodePoint cp = decodeUtf8(text, pos);
    if (cp.length == 0)
      throw ConfigError("text is not UTF-8: byte offset " + std::to_string(pos) + " (0x" + [&] {
        std::ostringstream hex;
        hex << std::hex << static_cast<int>(static_cast<unsigned char>(text[pos]));
        return hex.str();
      }() + ") does not start a valid UTF-8 sequence");
    cps.push_back(cp.value);
    classes.push_back(classify(cp.value));
    offsets.push_back(pos);
    pos += cp.length;
  }
  const size_t n = cps.size();
  offsets.push_back(text.size());

  // The pattern's alternatives, tried in order at each position as a
  // backtracking regular expression engine does; every character matches one
  // of them, so each match starts where the previous one ended.
  std::vector<std::pair<size_t, size_t>> pieces;
  size_t i = 0;
  const auto emit = [&](size_t end) {
    pieces.emplace_back(offsets[i], offsets[end]);
    i = end;
  };
  while (i < n) {
    // 's|'t|'re|'ve|'m|'ll|'d
    if (cps[i] == '\'' && i + 1 < n) {
      const char32_t a = cps[i + 1];
      if (a == 's' || a == 't' || a == 'm' || a == 'd') {
        emit(i + 2);
        continue;
      }
      if (i + 2 < n) {
        const char32_t b = cps[i + 2];
        if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) {
          emit(i + 3);
          continue;
        }
      }
    }
    // ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+`: an optional space (U+0020
    // only) and a run of one class.
    size_t start = i;
    if (cps[i] == ' ' && i + 1 < n && classes[i + 1] != CharClass::kSpace) start = i + 1;
    if (classes[start] != CharClass::kSpace) {
      size_t end = start + 1;
      while (end < n && classes[end] == classes[start]) ++end;
      emit(end);
      continue;
    }
    // `\s+(?!\S)`: a run of white space, less its last character when a
    // non-space follows it (so that character can lead the next word), then
    // `\s+`: a single white space before a non-space.
    size_t end = i + 1;
    while (end < n && classes[end] == CharClass::kSpace) ++end;
    if (end < n && end - i > 1) --end;
    emit(end);
  }
  return pieces;
}

std::unique_ptr<Gpt2Bpe> Gpt2Bpe::fromDirectory(const std::string& dir) {
  if (!fs::is_directory(dir))
    throw ConfigError(dir + ": not a directory (GPT-2 BPE files are read from a directory)");
  const fs::path d(dir);
  // OpenAI's names first, then Hugging Face's.
  for (const auto& [vocab, merges] :
       {std::pair<const char*, const char*>{"encoder.json", "vocab.bpe"},
        {"vocab.json", "merges.txt"}}) {
    const bool hasVocab = fs::exists(d / vocab), hasMerges = fs::exists(d / merges);
    if (hasVocab && hasMerges)
      return std::make_unique<Gpt2Bpe>((d / vocab).string(), (d / merges).string());
    if (hasVocab != hasMerges)
      throw ConfigError((d / (hasVocab ? merges : vocab)).string() +
                        ": not found (GPT-2 BPE needs " + vocab + " and " + merges +
                        " side by side; " + (d / (hasVocab ? vocab : merges)).string() +
                        " is there)");
  }
  throw ConfigError((d / "encoder.json").string() +
                    ": not found (a tokenizer directory holds a Hugging Face tokenizer.json, "
                    "or GPT-2's encoder.json and vocab.bpe, or vocab.json and merges.txt)");
}

Gpt2Bpe::Gpt2Bpe(const std::string& vocabPath, const std::string& mergesPath) {
  nlohmann::json vocab;
  {
    std::ifstream in = openOrThrow(vocabPath, "the GPT-2 vocabulary");
    try {
      vocab = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      throw ConfigError(vocabPath + ": not valid JSON (" + e.what() + ")");
    }
  }
  if (!vocab.is_object() || vocab.empty())
    throw ConfigError(vocabPath + ": expected a JSON object mapping each token to its id");

  int64_t maxId = -1;
  for (const auto& [token, idJson] : vocab.items()) {
    if (!idJson.is_number_integer() || idJson.get<int64_t>() < 0 ||
        idJson.get<int64_t>() >= INT32_MAX)
      throw ConfigError(vocabPath + ": the id of token \"" + token + "\" is " + idJson.dump() +
                        ", not an integer in [0, 2^31 - 1)");
    maxId = std::max(maxId, idJson.get<int64_t>());
  }
  bpe_ = ByteLevelBpe(maxId + 1);
  for (const auto& [token, idJson] : vocab.items()) {
    const auto id = idJson.get<int32_t>();
    if (token == "<|endoftext|>") endOfText_ = id;
    if (!bpe_.addSpelledToken(id, token))
      throw ConfigError(vocabPath + ": id " + std::to_string(id) + " is given to two tokens");
  }
  bpe_.findByteTokens(vocabPath);

  std::ifstream in = openOrThrow(mergesPath, "the GPT-2 merges");
  std::string line;
  int64_t merges = 0;
  for (int64_t lineNo = 1; std::getline(in, line); ++lineNo) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (lineNo == 1 && line.rfind("#version", 0) == 0) continue;
    if (line.empty()) continue;
    const std::string where = mergesPath + ":" + std::to_string(lineNo);
    std::istringstream fields(line);
    std::string left, right, extra;
    if (!(fields >> left >> right) || (fields >> extra))
      throw ConfigError(where + ": expected a merge, two tokens separated by a space, got \"" +
                        line + "\"");
    bpe_.addMerge(bpe_.spelledId(left, where, vocabPath), bpe_.spelledId(right, where, vocabPath),
                  bpe_.spelledId(left + right, where, vocabPath));
    ++merges;
  }
  if (in.bad()) throw ConfigError(mergesPath + ": read failed");
  description_ = "GPT-2 BPE (" + vocabPath + ", " + mergesPath + ": " +
                 std::to_string(bpe_.tokenCount()) + " tokens, " + std::to_string(merges) +
                 " merges)";
}

std::vector<int64_t> Gpt2Bpe::encode(std::string_view text) const {
  std::vector<int64_t> ids;
  ids.reserve(text.size() / 3 + 1);
  for (const auto& [begin, end] : gpt2Pretokenize(text))
    bpe_.encodePiece(text.substr(begin, end - begin), ids);
  return ids;
}

std::string Gpt2Bpe::decode(const std::vector<int64_t>& ids) const {
  return bpe_.decode(ids, "GPT-2");
}

}  // namespace strata::train
