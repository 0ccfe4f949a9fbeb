// The parsed form of a chat template: expressions and statements, each
// evaluated by template_eval.cpp against a Scope. Built by parseTemplate()
// (template_parser.cpp); immutable afterwards, so one parsed template may
// render from several threads at once.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "data/chat/template_value.h"

namespace strata::train::jinja {

class Scope;

struct Expr {
  explicit Expr(int line) : line(line) {}
  virtual ~Expr() = default;
  virtual Value eval(Scope& scope) const = 0;
  int line;
};
using ExprPtr = std::unique_ptr<Expr>;

struct Literal : Expr {
  Literal(int line, Value value) : Expr(line), value(std::move(value)) {}
  Value eval(Scope&) const override { return value; }
  Value value;
};

struct NameRef : Expr {
  NameRef(int line, std::string name) : Expr(line), name(std::move(name)) {}
  Value eval(Scope& scope) const override;
  std::string name;
};

struct ListExpr : Expr {
  ListExpr(int line, bool tuple = false) : Expr(line), tuple(tuple) {}
  Value eval(Scope& scope) const override;
  std::vector<ExprPtr> items;
  bool tuple;
};

struct DictExpr : Expr {
  using Expr::Expr;
  Value eval(Scope& scope) const override;
  std::vector<std::pair<ExprPtr, ExprPtr>> items;
};

struct Attribute : Expr {  // object.name
  Attribute(int line, ExprPtr object, std::string name)
      : Expr(line), object(std::move(object)), name(std::move(name)) {}
  Value eval(Scope& scope) const override;
  ExprPtr object;
  std::string name;
};

struct Subscript : Expr {  // object[index] or object[start:stop:step]
  using Expr::Expr;
  Value eval(Scope& scope) const override;
  ExprPtr object, index, start, stop, step;
  bool slice = false;
};

struct Arguments {
  std::vector<ExprPtr> positional;
  std::vector<std::pair<std::string, ExprPtr>> keywords;
  CallArgs eval(Scope& scope) const;
};

struct Call : Expr {
  using Expr::Expr;
  Value eval(Scope& scope) const override;
  ExprPtr function;
  Arguments arguments;
};

struct FilterExpr : Expr {  // value | name(arguments)
  using Expr::Expr;
  Value eval(Scope& scope) const override;
  ExprPtr value;
  std::string name;
  Arguments arguments;
};

struct TestExpr : Expr {  // value is [not] name(arguments)
  using Expr::Expr;
  Value eval(Scope& scope) const override;
  ExprPtr value;
  std::string name;
  Arguments arguments;
  bool negated = false;
};

struct Unary : Expr {  // not, -, +
  Unary(int line, std::string op, ExprPtr operand)
      : Expr(line), op(std::move(op)), operand(std::move(operand)) {}
  Value eval(Scope& scope) const override;
  std::string op;
  ExprPtr operand;
};

struct Binary : Expr {  // and or + - * / // % ** ~ == != < <= > >= in, "not in"
  Binary(int line, std::string op, ExprPtr left, ExprPtr right)
      : Expr(line), op(std::move(op)), left(std::move(left)), right(std::move(right)) {}
  Value eval(Scope& scope) const override;
  std::string op;
  ExprPtr left, right;
};

struct Conditional : Expr {  // then if condition else otherwise
  using Expr::Expr;
  Value eval(Scope& scope) const override;
  ExprPtr then, condition, otherwise;  // otherwise may be null: undefined
};

struct Stmt {
  explicit Stmt(int line) : line(line) {}
  virtual ~Stmt() = default;
  virtual void run(Scope& scope) const = 0;
  int line;
};
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct TextStmt : Stmt {
  TextStmt(int line, std::string text) : Stmt(line), text(std::move(text)) {}
  void run(Scope& scope) const override;
  std::string text;
};

struct OutputStmt : Stmt {
  OutputStmt(int line, ExprPtr value) : Stmt(line), value(std::move(value)) {}
  void run(Scope& scope) const override;
  ExprPtr value;
};

struct IfStmt : Stmt {
  using Stmt::Stmt;
  void run(Scope& scope) const override;
  std::vector<std::pair<ExprPtr, Body>> branches;  // if and each elif
  Body otherwise;
};

struct ForStmt : Stmt {
  using Stmt::Stmt;
  void run(Scope& scope) const override;
  std::vector<std::string> targets;  // one name, or several unpacked
  ExprPtr iterable, filter;          // filter may be null
  Body body, otherwise;
};

struct SetStmt : Stmt {  // set name = value, set ns.attribute = value, set name %}...{% endset
  using Stmt::Stmt;
  void run(Scope& scope) const override;
  std::string name, attribute;  // attribute: for a namespace
  ExprPtr value;                // null for the block form
  Body body;
};

struct LoopControlStmt : Stmt {  // break, continue
  LoopControlStmt(int line, bool isBreak) : Stmt(line), isBreak(isBreak) {}
  void run(Scope& scope) const override;
  bool isBreak;
};

// {% generation %}...{% endgeneration %}: transformers' mark of the
// assistant's text; the renderer records where the body's output falls.
struct GenerationStmt : Stmt {
  using Stmt::Stmt;
  void run(Scope& scope) const override;
  Body body;
};

Body parseTemplate(const std::string& source, const std::string& origin);

// Whether applyFilter / applyTest (template_scope.h) know `name`, so that a
// template using another is refused when it is read.
bool isKnownFilter(const std::string& name);
bool isKnownTest(const std::string& name);

}  // namespace strata::train::jinja
