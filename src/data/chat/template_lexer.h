// Cuts a chat template's source into text and tags, and a tag's inside into
// tokens, as Jinja's lexer does under the settings transformers uses for
// chat templates: trim_blocks (the first newline after a block tag or
// comment is dropped), lstrip_blocks (spaces and tabs before a block tag or
// comment at the start of a line are dropped), and the whitespace control
// marks `{%-`/`-%}` (all whitespace before/after the tag dropped) and
// `{%+`/`+%}` (the lstrip/trim above not applied). Comments `{# #}` vanish.
// A tag ends at the first `}}` or `%}` outside strings and brackets.
//
// Throws ConfigError naming the origin and line for an unterminated tag,
// comment or string, and a character no token starts with.
#pragma once

#include <string>
#include <vector>

namespace strata::train::jinja {

struct Token {
  enum class Kind { kName, kString, kInteger, kFloat, kOperator, kEnd };
  Kind kind = Kind::kEnd;
  std::string text;  // a string's value with its escapes read; an operator's spelling
  int line = 1;
};

struct Segment {
  enum class Kind { kText, kOutput, kStatement };  // text, {{ ... }}, {% ... %}
  Kind kind = Kind::kText;
  std::string text;           // kText only
  std::vector<Token> tokens;  // kOutput and kStatement, ending with a kEnd token
  int line = 1;
};

std::vector<Segment> lexTemplate(const std::string& source, const std::string& origin);

}  // namespace strata::train::jinja
