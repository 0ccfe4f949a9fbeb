#include "data/hf_pretokenizer.h"

#include <unicode/utf16.h>
#include <unicode/utf8.h>

#include "strata/data/byte_level_bpe.h"
#include "strata/error.h"

namespace strata::train {
namespace {

using File = formats::TokenizerJson;

std::shared_ptr<const icu::RegexPattern> compile(const std::string& pattern, bool literal,
                                                 const std::string& path) {
  UParseError where{};
  UErrorCode status = U_ZERO_ERROR;
  std::shared_ptr<const icu::RegexPattern> compiled(icu::RegexPattern::compile(
      icu::UnicodeString::fromUTF8(pattern), literal ? UREGEX_LITERAL : 0, where, status));
  if (U_FAILURE(status))
    throw ConfigError(path + ": pre_tokenizer: ICU cannot compile the pattern " + pattern + " (" +
                      u_errorName(status) + " at character " + std::to_string(where.offset) + ")");
  return compiled;
}

// Appends the pieces of `piece` between the matches of `pattern` and, unless
// `removeMatches`, the matches themselves, as Hugging Face's Split does.
void splitBy(const icu::RegexPattern& pattern, bool removeMatches, const std::string& piece,
             std::vector<std::string>& out) {
  const icu::UnicodeString text = icu::UnicodeString::fromUTF8(piece);
  UErrorCode status = U_ZERO_ERROR;
  std::unique_ptr<icu::RegexMatcher> matcher(pattern.matcher(text, status));
  // A long run of white space backtracks deep into `\s+(?!\S)`: no stack cap.
  if (U_SUCCESS(status)) matcher->setStackLimit(0, status);
  // Matches come in order, so one cursor turns UTF-16 indices into byte offsets.
  int32_t at16 = 0;
  size_t at8 = 0;
  const auto byteOffset = [&](int32_t to16) {
    while (at16 < to16) {
      const UChar32 c = text.char32At(at16);
      at16 += U16_LENGTH(c);
      at8 += U8_LENGTH(c);
    }
    return at8;
  };
  size_t done = 0;
  while (U_SUCCESS(status) && matcher->find(status)) {
    const int32_t start16 = matcher->start(status), end16 = matcher->end(status);
    if (U_FAILURE(status) || start16 == end16) continue;
    const size_t start = byteOffset(start16), end = byteOffset(end16);
    if (start > done) out.push_back(piece.substr(done, start - done));
    if (!removeMatches) out.push_back(piece.substr(start, end - start));
    done = end;
  }
  if (U_FAILURE(status))
    throw ConfigError(std::string("the pre-tokenizer's pattern failed on a text: ICU's ") +
                      u_errorName(status));
  if (done < piece.size()) out.push_back(piece.substr(done));
}

}  // namespace

HfPreTokenizer::HfPreTokenizer(const File& file) {
  if (file.normalizer == File::Normalizer::kNfc) {
    UErrorCode status = U_ZERO_ERROR;
    nfc_ = icu::Normalizer2::getNFCInstance(status);
    if (U_FAILURE(status))
      throw ConfigError(file.path + ": normalizer NFC: ICU has no NFC data (" +
                        u_errorName(status) + ")");
  }
  std::shared_ptr<const icu::RegexPattern> gpt2;
  for (const File::PreTokenizerStep& step : file.preTokenizer) {
    Step compiled;
    if (step.kind == File::PreTokenizerStep::Kind::kSplit) {
      compiled.pattern = compile(step.pattern, !step.patternIsRegex, file.path);
      compiled.removeMatches = step.behavior == File::SplitBehavior::kRemoved;
    } else {
      compiled.addPrefixSpace = step.addPrefixSpace;
      if (step.useRegex) {
        if (!gpt2) gpt2 = compile(kGpt2Pattern, false, file.path);
        compiled.pattern = gpt2;
      }
    }
    steps_.push_back(std::move(compiled));
  }
}

std::string HfPreTokenizer::normalize(std::string_view text) const {
  if (!nfc_) return std::string(text);
  UErrorCode status = U_ZERO_ERROR;
  const icu::UnicodeString unicode = icu::UnicodeString::fromUTF8(
      icu::StringPiece(text.data(), static_cast<int32_t>(text.size())));
  if (nfc_->isNormalized(unicode, status) && U_SUCCESS(status)) return std::string(text);
  std::string out;
  nfc_->normalize(unicode, status).toUTF8String(out);
  if (U_FAILURE(status))
    throw ConfigError(std::string("NFC normalization failed: ICU's ") + u_errorName(status));
  return out;
}

void HfPreTokenizer::split(std::string_view text, std::vector<std::string>& pieces) const {
  if (text.empty()) return;
  std::vector<std::string> current{std::string(text)}, next;
  for (const Step& step : steps_) {
    next.clear();
    for (std::string& piece : current) {
      // As Hugging Face's ByteLevel: each piece, not only the text's first.
      if (step.addPrefixSpace && piece.front() != ' ') piece.insert(piece.begin(), ' ');
      if (step.pattern)
        splitBy(*step.pattern, step.removeMatches, piece, next);
      else
        next.push_back(std::move(piece));
    }
    current.swap(next);
  }
  for (std::string& piece : current) pieces.push_back(std::move(piece));
}

}  // namespace strata::train
