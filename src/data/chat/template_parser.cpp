// Jinja's grammar, the part chat templates use, with Jinja's precedence
// (loosest first): a if b else c; or; and; not; comparisons and `in`;
// + -; ~; * / // %; **; unary - +; then filters (|), tests (is) and calls
// bind to the operand before them, after . [] () on it.
#include <set>

#include "data/chat/template_lexer.h"
#include "data/chat/template_syntax.h"
#include "strata/error.h"

namespace strata::train::jinja {
namespace {

class Cursor {
 public:
  Cursor(const std::vector<Token>& tokens, const std::string& origin)
      : tokens_(tokens), origin_(origin) {}

  const Token& peek(size_t ahead = 0) const {
    return tokens_[std::min(at_ + ahead, tokens_.size() - 1)];
  }
  Token take() { return at_ + 1 < tokens_.size() ? tokens_[at_++] : tokens_.back(); }
  bool atEnd() const { return peek().kind == Token::Kind::kEnd; }
  bool isOp(const char* op, size_t ahead = 0) const {
    return peek(ahead).kind == Token::Kind::kOperator && peek(ahead).text == op;
  }
  bool isName(const char* name, size_t ahead = 0) const {
    return peek(ahead).kind == Token::Kind::kName && peek(ahead).text == name;
  }
  bool acceptOp(const char* op) {
    if (!isOp(op)) return false;
    take();
    return true;
  }
  bool acceptName(const char* name) {
    if (!isName(name)) return false;
    take();
    return true;
  }
  void expectOp(const char* op) {
    if (!acceptOp(op)) fail(std::string("expected '") + op + "', found " + describe(peek()));
  }
  std::string expectName() {
    if (peek().kind != Token::Kind::kName) fail("expected a name, found " + describe(peek()));
    return take().text;
  }
  void expectEnd(const std::string& what) {
    if (!atEnd()) fail("unexpected " + describe(peek()) + " after " + what);
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw ConfigError(origin_ + ":" + std::to_string(peek().line) + ": " + what);
  }
  static std::string describe(const Token& token) {
    return token.kind == Token::Kind::kEnd ? "the end of the tag" : "'" + token.text + "'";
  }

 private:
  const std::vector<Token>& tokens_;
  const std::string& origin_;
  size_t at_ = 0;
};

class ExprParser {
 public:
  explicit ExprParser(Cursor& in) : in_(in) {}

  ExprPtr expression(bool allowConditional = true) {
    ExprPtr value = orExpr();
    if (allowConditional && in_.isName("if")) {
      const int line = in_.take().line;
      auto conditional = std::make_unique<Conditional>(line);
      conditional->then = std::move(value);
      conditional->condition = orExpr();
      if (in_.acceptName("else")) conditional->otherwise = expression();
      return conditional;
    }
    return value;
  }

  // One expression, or several separated by commas as a list (a tuple).
  ExprPtr tupleOrExpression() {
    const int line = in_.peek().line;
    ExprPtr first = expression();
    if (!in_.isOp(",")) return first;
    auto tuple = std::make_unique<ListExpr>(line, true);
    tuple->items.push_back(std::move(first));
    while (in_.acceptOp(",") && !in_.atEnd() && !in_.isOp(")"))
      tuple->items.push_back(expression());
    return tuple;
  }

  Arguments arguments() {  // after '('
    Arguments out;
    while (!in_.acceptOp(")")) {
      if (!out.positional.empty() || !out.keywords.empty()) in_.expectOp(",");
      if (in_.acceptOp(")")) break;
      if (in_.peek().kind == Token::Kind::kName && in_.isOp("=", 1)) {
        std::string name = in_.take().text;
        in_.take();
        out.keywords.emplace_back(std::move(name), expression());
      } else {
        if (!out.keywords.empty()) in_.fail("a positional argument after a keyword argument");
        out.positional.push_back(expression());
      }
    }
    return out;
  }

 private:
  template <typename Next>
  ExprPtr leftAssociative(std::initializer_list<const char*> ops, Next next) {
    ExprPtr left = (this->*next)();
    for (;;) {
      const char* found = nullptr;
      for (const char* op : ops)
        if (in_.isOp(op)) found = op;
      if (!found) return left;
      const int line = in_.take().line;
      left = std::make_unique<Binary>(line, found, std::move(left), (this->*next)());
    }
  }

  // Operands joined by the keyword `word` (or, and), left to right.
  ExprPtr keywordChain(const char* word, ExprPtr (ExprParser::*next)()) {
    ExprPtr left = (this->*next)();
    while (in_.isName(word)) {
      const int line = in_.take().line;
      left = std::make_unique<Binary>(line, word, std::move(left), (this->*next)());
    }
    return left;
  }
  ExprPtr orExpr() { return keywordChain("or", &ExprParser::andExpr); }
  ExprPtr andExpr() { return keywordChain("and", &ExprParser::notExpr); }
  ExprPtr notExpr() {
    if (in_.isName("not")) {
      const int line = in_.take().line;
      return std::make_unique<Unary>(line, "not", notExpr());
    }
    return compare();
  }
  ExprPtr compare() {
    ExprPtr left = sum();
    for (;;) {
      const int line = in_.peek().line;
      std::string op;
      for (const char* candidate : {"==", "!=", "<", "<=", ">", ">="})
        if (in_.isOp(candidate)) op = candidate;
      if (!op.empty()) {
        in_.take();
      } else if (in_.isName("in")) {
        in_.take();
        op = "in";
      } else if (in_.isName("not") && in_.isName("in", 1)) {
        in_.take();
        in_.take();
        op = "not in";
      } else {
        return left;
      }
      left = std::make_unique<Binary>(line, op, std::move(left), sum());
    }
  }
  ExprPtr sum() { return leftAssociative({"+", "-"}, &ExprParser::concat); }
  ExprPtr concat() { return leftAssociative({"~"}, &ExprParser::product); }
  ExprPtr product() { return leftAssociative({"*", "/", "//", "%"}, &ExprParser::power); }
  ExprPtr power() { return leftAssociative({"**"}, &ExprParser::unaryWithFilters); }
  ExprPtr unaryWithFilters() { return filters(unary()); }
  ExprPtr unary() {
    if (in_.isOp("-") || in_.isOp("+")) {
      const Token op = in_.take();
      return std::make_unique<Unary>(op.line, op.text, unary());
    }
    return postfix(primary());
  }

  ExprPtr filters(ExprPtr value) {
    for (;;) {
      const int line = in_.peek().line;
      if (in_.acceptOp("|")) {
        auto filter = std::make_unique<FilterExpr>(line);
        filter->value = std::move(value);
        filter->name = in_.expectName();
        if (!isKnownFilter(filter->name))
          in_.fail("the filter '" + filter->name +
                   "' is not implemented by Strata's chat templates");
        if (in_.acceptOp("(")) filter->arguments = arguments();
        value = std::move(filter);
      } else if (in_.acceptName("is")) {
        auto test = std::make_unique<TestExpr>(line);
        test->value = std::move(value);
        test->negated = in_.acceptName("not");
        test->name = in_.expectName();
        if (!isKnownTest(test->name))
          in_.fail("the test '" + test->name + "' is not implemented by Strata's chat templates");
        if (in_.acceptOp("(")) {
          test->arguments = arguments();
        } else if (startsTestArgument()) {
          test->arguments.positional.push_back(postfix(primary()));
        }
        value = std::move(test);
      } else if (in_.isOp("(")) {
        value = call(std::move(value));
      } else {
        return value;
      }
    }
  }
  bool startsTestArgument() const {
    const Token& t = in_.peek();
    if (t.kind == Token::Kind::kString || t.kind == Token::Kind::kInteger ||
        t.kind == Token::Kind::kFloat)
      return true;
    if (t.kind == Token::Kind::kOperator) return t.text == "[" || t.text == "{";
    static const std::set<std::string> kStops = {"else", "or", "and", "if", "in", "is", "not"};
    return t.kind == Token::Kind::kName && !kStops.count(t.text);
  }

  ExprPtr call(ExprPtr function) {
    const int line = in_.take().line;  // '('
    auto out = std::make_unique<Call>(line);
    out->function = std::move(function);
    out->arguments = arguments();
    return out;
  }

  ExprPtr postfix(ExprPtr value) {
    for (;;) {
      const int line = in_.peek().line;
      if (in_.acceptOp(".")) {
        const Token name = in_.take();
        if (name.kind == Token::Kind::kInteger) {
          auto index = std::make_unique<Subscript>(line);
          index->object = std::move(value);
          index->index =
              std::make_unique<Literal>(line, Value(static_cast<int64_t>(std::stoll(name.text))));
          value = std::move(index);
        } else if (name.kind == Token::Kind::kName) {
          value = std::make_unique<Attribute>(line, std::move(value), name.text);
        } else {
          in_.fail("expected an attribute name after '.', found " + Cursor::describe(name));
        }
      } else if (in_.acceptOp("[")) {
        value = subscript(line, std::move(value));
      } else if (in_.isOp("(")) {
        value = call(std::move(value));
      } else {
        return value;
      }
    }
  }

  ExprPtr subscript(int line, ExprPtr object) {  // after '['
    auto out = std::make_unique<Subscript>(line);
    out->object = std::move(object);
    auto part = [&]() -> ExprPtr {
      return in_.isOp(":") || in_.isOp("]") ? nullptr : expression();
    };
    ExprPtr first = part();
    if (in_.acceptOp(":")) {
      out->slice = true;
      out->start = std::move(first);
      out->stop = part();
      if (in_.acceptOp(":")) out->step = part();
    } else {
      if (!first) in_.fail("an empty subscript");
      out->index = std::move(first);
    }
    in_.expectOp("]");
    return out;
  }

  ExprPtr primary() {
    const Token token = in_.take();
    switch (token.kind) {
      case Token::Kind::kName: {
        if (token.text == "true" || token.text == "True")
          return std::make_unique<Literal>(token.line, Value(true));
        if (token.text == "false" || token.text == "False")
          return std::make_unique<Literal>(token.line, Value(false));
        if (token.text == "none" || token.text == "None")
          return std::make_unique<Literal>(token.line, Value::none());
        return std::make_unique<NameRef>(token.line, token.text);
      }
      case Token::Kind::kString: {
        std::string text = token.text;
        while (in_.peek().kind == Token::Kind::kString) text += in_.take().text;
        return std::make_unique<Literal>(token.line, Value(text));
      }
      case Token::Kind::kInteger:
        return std::make_unique<Literal>(token.line,
                                         Value(static_cast<int64_t>(std::stoll(token.text))));
      case Token::Kind::kFloat:
        return std::make_unique<Literal>(token.line, Value(std::stod(token.text)));
      case Token::Kind::kOperator: {
        if (token.text == "(") {
          if (in_.acceptOp(")")) return std::make_unique<ListExpr>(token.line, true);
          ExprPtr inner = tupleOrExpression();
          in_.expectOp(")");
          return inner;
        }
        if (token.text == "[") {
          auto list = std::make_unique<ListExpr>(token.line);
          while (!in_.acceptOp("]")) {
            if (!list->items.empty()) in_.expectOp(",");
            if (in_.acceptOp("]")) break;
            list->items.push_back(expression());
          }
          return list;
        }
        if (token.text == "{") {
          auto dict = std::make_unique<DictExpr>(token.line);
          while (!in_.acceptOp("}")) {
            if (!dict->items.empty()) in_.expectOp(",");
            if (in_.acceptOp("}")) break;
            ExprPtr key = expression();
            in_.expectOp(":");
            dict->items.emplace_back(std::move(key), expression());
          }
          return dict;
        }
        break;
      }
      case Token::Kind::kEnd:
        break;
    }
    in_.fail("expected an expression, found " + Cursor::describe(token));
  }

  Cursor& in_;
};

// Statements, each a tag's keyword, read until one of `ends`.
class StmtParser {
 public:
  StmtParser(const std::vector<Segment>& segments, const std::string& origin)
      : segments_(segments), origin_(origin) {}

  // Statements up to a tag whose keyword is in `ends` (returned in `end`,
  // its cursor left after the keyword) or the template's end when `ends` is
  // empty.
  Body body(const std::set<std::string>& ends, std::string& end, const std::string& opener,
            int openerLine) {
    Body out;
    while (at_ < segments_.size()) {
      const Segment& segment = segments_[at_++];
      if (segment.kind == Segment::Kind::kText) {
        out.push_back(std::make_unique<TextStmt>(segment.line, segment.text));
        continue;
      }
      Cursor in(segment.tokens, origin_);
      if (segment.kind == Segment::Kind::kOutput) {
        ExprParser expr(in);
        ExprPtr value = expr.tupleOrExpression();
        in.expectEnd("the expression");
        out.push_back(std::make_unique<OutputStmt>(segment.line, std::move(value)));
        continue;
      }
      const std::string keyword = in.expectName();
      if (ends.count(keyword)) {
        if (keyword.rfind("end", 0) == 0) in.expectEnd("'" + keyword + "'");
        end = keyword;
        current_ = &segment;
        return out;
      }
      out.push_back(statement(keyword, in, segment.line));
    }
    if (!ends.empty())
      throw ConfigError(origin_ + ":" + std::to_string(openerLine) + ": '{% " + opener +
                        " %}' is never closed (expected '{% " + *ends.rbegin() + " %}')");
    return out;
  }

 private:
  // The cursor of the tag that ended the last body().
  Cursor endCursor() const { return Cursor(current_->tokens, origin_); }

  StmtPtr statement(const std::string& keyword, Cursor& in, int line) {
    if (keyword == "if") return ifStatement(in, line);
    if (keyword == "for") return forStatement(in, line);
    if (keyword == "set") return setStatement(in, line);
    if (keyword == "break" || keyword == "continue") {
      in.expectEnd("'" + keyword + "'");
      return std::make_unique<LoopControlStmt>(line, keyword == "break");
    }
    if (keyword == "generation") {
      in.expectEnd("'generation'");
      auto out = std::make_unique<GenerationStmt>(line);
      std::string end;
      out->body = body({"endgeneration"}, end, "generation", line);
      return out;
    }
    static const std::set<std::string> kKnown = {"macro",  "call", "filter",     "include",
                                                 "import", "from", "extends",    "block",
                                                 "with",   "raw",  "autoescape", "do"};
    if (kKnown.count(keyword))
      in.fail("the template uses '{% " + keyword +
              " %}', which Strata's chat templates do not implement (they implement if, for, set, "
              "break, continue and generation)");
    in.fail("unknown statement '{% " + keyword + " %}'");
  }

  StmtPtr ifStatement(Cursor& in, int line) {
    auto out = std::make_unique<IfStmt>(line);
    ExprPtr condition = condition_(in, "if");
    for (;;) {
      std::string end;
      Body branch = body({"elif", "else", "endif"}, end, "if", line);
      out->branches.emplace_back(std::move(condition), std::move(branch));
      Cursor tag = endCursor();
      tag.take();
      if (end == "elif") {
        condition = condition_(tag, "elif");
        continue;
      }
      tag.expectEnd("'" + end + "'");
      if (end == "else") out->otherwise = body({"endif"}, end, "if", line);
      return out;
    }
  }

  ExprPtr condition_(Cursor& in, const std::string& keyword) {
    ExprParser expr(in);
    ExprPtr condition = expr.expression();
    in.expectEnd("the " + keyword + " condition");
    return condition;
  }

  StmtPtr forStatement(Cursor& in, int line) {
    auto out = std::make_unique<ForStmt>(line);
    const bool parenthesized = in.acceptOp("(");
    do out->targets.push_back(in.expectName());
    while (in.acceptOp(","));
    if (parenthesized) in.expectOp(")");
    if (!in.acceptName("in"))
      in.fail("expected 'in' after the loop's names, found " + Cursor::describe(in.peek()));
    ExprParser expr(in);
    out->iterable = expr.expression(false);
    if (in.acceptName("if")) out->filter = expr.expression(false);
    if (in.isName("recursive")) in.fail("recursive loops are not implemented");
    in.expectEnd("the loop's iterable");
    std::string end;
    out->body = body({"else", "endfor"}, end, "for", line);
    if (end == "else") out->otherwise = body({"endfor"}, end, "for", line);
    return out;
  }

  StmtPtr setStatement(Cursor& in, int line) {
    auto out = std::make_unique<SetStmt>(line);
    out->name = in.expectName();
    if (in.acceptOp(".")) out->attribute = in.expectName();
    if (in.isOp(",")) in.fail("'{% set a, b = ... %}' (unpacking) is not implemented");
    if (in.atEnd()) {
      if (!out->attribute.empty()) in.fail("the block form of set takes a plain name");
      std::string end;
      out->body = body({"endset"}, end, "set", line);
      return out;
    }
    in.expectOp("=");
    ExprParser expr(in);
    out->value = expr.tupleOrExpression();
    in.expectEnd("the value of set");
    return out;
  }

  const std::vector<Segment>& segments_;
  const std::string& origin_;
  size_t at_ = 0;
  const Segment* current_ = nullptr;
};

}  // namespace

Body parseTemplate(const std::string& source, const std::string& origin) {
  const std::vector<Segment> segments = lexTemplate(source, origin);
  StmtParser parser(segments, origin);
  std::string end;
  return parser.body({}, end, "", 1);
}

}  // namespace strata::train::jinja
