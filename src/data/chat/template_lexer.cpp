#include "data/chat/template_lexer.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "strata/error.h"

namespace strata::train::jinja {
namespace {

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

std::string rtrim(const std::string& text) {
  size_t end = text.size();
  while (end > 0 && isSpace(text[end - 1])) --end;
  return text.substr(0, end);
}

// lstrip_blocks: drops the spaces and tabs between the last line start in
// `text` and a block tag, when nothing else is between them.
std::string lstripBlock(const std::string& text, bool lineStarting) {
  const size_t lineStart = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
  if (lineStart == 0 && !lineStarting) return text;
  if (lineStart == text.size()) return text;
  for (size_t i = lineStart; i < text.size(); ++i)
    if (!isSpace(text[i])) return text;
  return text.substr(0, lineStart);
}

class TagLexer {
 public:
  TagLexer(const std::string& source, size_t pos, int line, const std::string& origin)
      : source_(source), pos_(pos), line_(line), origin_(origin) {}

  // Tokens up to the tag's end `close` ("}}" or "%}"); leaves pos() after it
  // and says whether the end carried '-' (strip after) or '+'.
  std::vector<Token> run(const char* close, char& endMark) {
    std::vector<Token> tokens;
    int depth = 0;
    for (;;) {
      skipSpaces();
      if (pos_ >= source_.size())
        fail("the tag opened here is never closed with '" + std::string(close) + "'");
      if (depth == 0) {
        for (char mark : {'-', '+', '\0'}) {
          const std::string end = mark ? std::string(1, mark) + close : std::string(close);
          if (source_.compare(pos_, end.size(), end) == 0) {
            pos_ += end.size();
            endMark = mark;
            tokens.push_back({Token::Kind::kEnd, "", line_});
            return tokens;
          }
        }
      }
      Token token = next();
      if (token.kind == Token::Kind::kOperator) {
        if (token.text == "(" || token.text == "[" || token.text == "{") ++depth;
        if ((token.text == ")" || token.text == "]" || token.text == "}") && depth > 0) --depth;
      }
      tokens.push_back(std::move(token));
    }
  }
  size_t pos() const { return pos_; }
  int line() const { return line_; }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw ConfigError(origin_ + ":" + std::to_string(line_) + ": " + what);
  }

  void skipSpaces() {
    while (pos_ < source_.size() && isSpace(source_[pos_])) {
      if (source_[pos_] == '\n') ++line_;
      ++pos_;
    }
  }

  Token next() {
    const char c = source_[pos_];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') return name();
    if (std::isdigit(static_cast<unsigned char>(c))) return number();
    if (c == '\'' || c == '"') return string(c);
    static const char* const kOperators[] = {"**", "//", "==", "!=", "<=", ">=", "+", "-", "*",
                                             "/",  "%",  "~",  "<",  ">",  "(",  ")", "[", "]",
                                             "{",  "}",  ",",  ".",  ":",  "|",  "="};
    for (const char* op : kOperators) {
      if (source_.compare(pos_, std::strlen(op), op) == 0) {
        pos_ += std::strlen(op);
        return {Token::Kind::kOperator, op, line_};
      }
    }
    fail(std::string("unexpected character '") + c + "' in a tag");
  }

  Token name() {
    const size_t start = pos_;
    while (pos_ < source_.size() &&
           (std::isalnum(static_cast<unsigned char>(source_[pos_])) || source_[pos_] == '_'))
      ++pos_;
    return {Token::Kind::kName, source_.substr(start, pos_ - start), line_};
  }

  Token number() {
    const size_t start = pos_;
    bool isFloat = false;
    auto digits = [&] {
      while (pos_ < source_.size() &&
             (std::isdigit(static_cast<unsigned char>(source_[pos_])) || source_[pos_] == '_'))
        ++pos_;
    };
    digits();
    if (pos_ + 1 < source_.size() && source_[pos_] == '.' &&
        std::isdigit(static_cast<unsigned char>(source_[pos_ + 1]))) {
      isFloat = true;
      ++pos_;
      digits();
    }
    if (pos_ < source_.size() && (source_[pos_] == 'e' || source_[pos_] == 'E')) {
      isFloat = true;
      ++pos_;
      if (pos_ < source_.size() && (source_[pos_] == '+' || source_[pos_] == '-')) ++pos_;
      digits();
    }
    std::string text = source_.substr(start, pos_ - start);
    text.erase(std::remove(text.begin(), text.end(), '_'), text.end());
    return {isFloat ? Token::Kind::kFloat : Token::Kind::kInteger, text, line_};
  }

  static void appendUtf8(uint32_t code, std::string& out) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  // A quoted string, its escapes read as Python reads them.
  Token string(char quote) {
    const int startLine = line_;
    std::string text;
    ++pos_;
    for (;;) {
      if (pos_ >= source_.size()) {
        line_ = startLine;
        fail("a string opened here is never closed");
      }
      const char c = source_[pos_++];
      if (c == quote) break;
      if (c == '\n') ++line_;
      if (c != '\\' || pos_ >= source_.size()) {
        text += c;
        continue;
      }
      const char e = source_[pos_++];
      switch (e) {
        case 'n':
          text += '\n';
          break;
        case 't':
          text += '\t';
          break;
        case 'r':
          text += '\r';
          break;
        case 'b':
          text += '\b';
          break;
        case 'f':
          text += '\f';
          break;
        case 'v':
          text += '\v';
          break;
        case '0':
          text += '\0';
          break;
        case '\\':
          text += '\\';
          break;
        case '\'':
          text += '\'';
          break;
        case '"':
          text += '"';
          break;
        case '\n':
          ++line_;
          break;  // a line continuation
        case 'x':
        case 'u':
        case 'U': {
          const size_t width = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          if (pos_ + width > source_.size())
            fail(std::string("a truncated \\") + e + " escape in a string");
          const std::string hex = source_.substr(pos_, width);
          if (hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
            fail(std::string("a malformed \\") + e + " escape in a string");
          appendUtf8(static_cast<uint32_t>(std::stoul(hex, nullptr, 16)), text);
          pos_ += width;
          break;
        }
        default:
          text += '\\';
          text += e;  // Python keeps unknown escapes
      }
    }
    return {Token::Kind::kString, text, startLine};
  }

  const std::string& source_;
  size_t pos_;
  int line_;
  const std::string& origin_;
};

int linesIn(const std::string& text, size_t begin, size_t end) {
  return static_cast<int>(std::count(text.begin() + static_cast<long>(begin),
                                     text.begin() + static_cast<long>(end), '\n'));
}

// As Jinja reads a template: every newline spelled \n, and one newline at
// the very end dropped (keep_trailing_newline is off).
std::string normalizeNewlines(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r') {
      out += '\n';
      if (i + 1 < text.size() && text[i + 1] == '\n') ++i;
    } else {
      out += text[i];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace

std::vector<Segment> lexTemplate(const std::string& raw, const std::string& origin) {
  const std::string source = normalizeNewlines(raw);
  std::vector<Segment> segments;
  size_t pos = 0;
  int line = 1;
  bool stripLeading = false;  // the previous tag ended with '-'
  bool lineStarting = true;   // the next text starts a line
  for (;;) {
    size_t open = pos;
    while ((open = source.find('{', open)) != std::string::npos && open + 1 < source.size() &&
           std::strchr("{%#", source[open + 1]) == nullptr)
      ++open;
    if (open + 1 >= source.size()) open = std::string::npos;
    std::string text =
        source.substr(pos, open == std::string::npos ? std::string::npos : open - pos);
    const int textLine = line;
    line += linesIn(source, pos, open == std::string::npos ? source.size() : open);
    if (stripLeading)
      text.erase(0, std::find_if_not(text.begin(), text.end(), isSpace) - text.begin());
    if (open == std::string::npos) {
      if (!text.empty()) segments.push_back({Segment::Kind::kText, text, {}, textLine});
      return segments;
    }
    const char kind = source[open + 1];
    const char mark = open + 2 < source.size() ? source[open + 2] : '\0';
    if (mark == '-')
      text = rtrim(text);
    else if (mark != '+' && kind != '{')
      text = lstripBlock(text, lineStarting);
    if (!text.empty()) segments.push_back({Segment::Kind::kText, text, {}, textLine});
    size_t inside = open + 2 + (mark == '-' || mark == '+' ? 1 : 0);
    char endMark = '\0';
    if (kind == '#') {
      const size_t close = source.find("#}", inside);
      if (close == std::string::npos)
        throw ConfigError(origin + ":" + std::to_string(line) +
                          ": a comment opened here is never closed");
      endMark = close > inside && (source[close - 1] == '-' || source[close - 1] == '+')
                    ? source[close - 1]
                    : '\0';
      line += linesIn(source, open, close);
      pos = close + 2;
    } else {
      TagLexer lexer(source, inside, line, origin);
      Segment tag{kind == '{' ? Segment::Kind::kOutput : Segment::Kind::kStatement, "", {}, line};
      tag.tokens = lexer.run(kind == '{' ? "}}" : "%}", endMark);
      segments.push_back(std::move(tag));
      line = lexer.line();
      pos = lexer.pos();
    }
    // trim_blocks: the newline right after a block tag or comment goes.
    lineStarting = false;
    if (kind != '{' && endMark == '\0' && pos < source.size() && source[pos] == '\n') {
      ++pos;
      ++line;
      lineStarting = true;
    }
    stripLeading = endMark == '-';
    if (stripLeading) {  // the whitespace the '-' drops may end a line
      size_t next = pos;
      while (next < source.size() && isSpace(source[next])) ++next;
      lineStarting = next > pos && source[next - 1] == '\n';
    }
  }
}

}  // namespace strata::train::jinja
