#include "plugins/torchscript/ConfigExpression.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <memory>
#include <set>
#include <vector>

#include "plugins/torchscript/TransformArguments.h"

namespace medseg::torchscript {
namespace {

using nlohmann::json;

// Thrown inside this file only: the expression holds something MedSeg does not evaluate.
struct NotEvaluated {
  std::string why;
};
[[noreturn]] void notEvaluated(const std::string& why) { throw NotEvaluated{why}; }

// --- tokens -------------------------------------------------------------------------------------------

struct Token {
  enum Kind { Number, String, Reference, Name, Op, End } kind = End;
  std::string text;  // the name, the operator, the reference's id, the string's contents
  json number;
};

class Lexer {
 public:
  explicit Lexer(const std::string& text) : text_(text) {}

  std::vector<Token> tokens() {
    std::vector<Token> out;
    for (skipSpace(); pos_ < text_.size(); skipSpace()) out.push_back(next());
    out.push_back(Token{Token::End, "", nullptr});
    return out;
  }

 private:
  void skipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool at(size_t i, const char* set) const { return i < text_.size() && std::strchr(set, text_[i]) != nullptr; }
  bool digit(size_t i) const { return i < text_.size() && std::isdigit(static_cast<unsigned char>(text_[i])); }
  bool word(size_t i) const {
    return i < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[i])) || text_[i] == '_');
  }

  Token next() {
    const char c = text_[pos_];
    if (digit(pos_) || (c == '.' && digit(pos_ + 1))) return number();
    if (c == '\'' || c == '"') return quoted();
    if (c == '@') return reference();
    if (word(pos_)) {
      const size_t start = pos_;
      while (word(pos_)) ++pos_;
      const std::string name = text_.substr(start, pos_ - start);
      if (at(pos_, "'\"")) notEvaluated("the prefixed string " + name + "'...' (f-, r- and b-strings)");
      return Token{Token::Name, name, nullptr};
    }
    for (const char* op : {"**", "//", "==", "!=", "<=", ">="})
      if (text_.compare(pos_, 2, op) == 0) {
        pos_ += 2;
        return Token{Token::Op, op, nullptr};
      }
    if (at(pos_, "+-*/%<>()[],:.=")) return Token{Token::Op, std::string(1, text_[pos_++]), nullptr};
    if (c == '{') notEvaluated("a dict or set literal");
    notEvaluated(std::string("the character '") + c + "'");
  }

  Token number() {
    const size_t start = pos_;
    bool fraction = false;
    while (digit(pos_) || at(pos_, "_")) ++pos_;
    if (at(pos_, "xXoObB") && text_[start] == '0' && pos_ == start + 1) notEvaluated("a hexadecimal, octal or binary number");
    if (at(pos_, ".")) {
      fraction = true;
      for (++pos_; digit(pos_) || at(pos_, "_");) ++pos_;
    }
    if (at(pos_, "eE") && (digit(pos_ + 1) || (at(pos_ + 1, "+-") && digit(pos_ + 2)))) {
      fraction = true;
      pos_ += 2;
      while (digit(pos_)) ++pos_;
    }
    if (at(pos_, "jJ")) notEvaluated("a complex number");
    std::string digits;
    for (size_t i = start; i < pos_; ++i)
      if (text_[i] != '_') digits += text_[i];
    try {
      return Token{Token::Number, digits, fraction ? json(std::stod(digits)) : json(std::stoll(digits))};
    } catch (const std::exception&) {
      notEvaluated("the number " + digits + " (beyond 64 bits)");
    }
  }

  Token quoted() {
    const char quote = text_[pos_++];
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] != '\\') {
        out += text_[pos_++];
        continue;
      }
      const char e = pos_ + 1 < text_.size() ? text_[pos_ + 1] : '\0';
      const char* from = "\\'\"nt";
      const char* to = "\\'\"\n\t";
      const char* found = e ? std::strchr(from, e) : nullptr;
      if (!found) notEvaluated(std::string("the string escape \\") + e);
      out += to[found - from];
      pos_ += 2;
    }
    if (pos_ >= text_.size()) notEvaluated("an unterminated string");
    ++pos_;
    return Token{Token::String, out, nullptr};
  }

  // MONAI's reference pattern: "@" then word characters, parts separated by "::" ("#" is its old spelling).
  Token reference() {
    const size_t start = ++pos_;
    while (word(pos_) || at(pos_, "#") || text_.compare(pos_, 2, "::") == 0) pos_ += text_.compare(pos_, 2, "::") == 0 ? 2 : 1;
    std::string id = text_.substr(start, pos_ - start);
    for (size_t hash = id.find('#'); hash != std::string::npos; hash = id.find('#')) id.replace(hash, 1, "::");
    return Token{Token::Reference, id, nullptr};
  }

  const std::string& text_;
  size_t pos_ = 0;
};

// --- syntax -------------------------------------------------------------------------------------------

struct Node;
using NodePtr = std::shared_ptr<Node>;
struct Node {
  enum Kind { Literal, Reference, Name, List, Tuple, Negate, Plus, Binary, Compare, And, Or, Not, IfElse, Call, Index, Slice };
  Kind kind;
  json value;                   // Literal
  std::string text;             // Reference id, Name (dotted), Binary operator, Call's function
  std::vector<NodePtr> kids;    // operands, in order; Slice: object, from (or null), to (or null)
  std::vector<std::string> ops;  // Compare: the operators between kids
};
NodePtr node(Node::Kind kind, std::vector<NodePtr> kids = {}, std::string text = {}) {
  auto n = std::make_shared<Node>();
  n->kind = kind;
  n->kids = std::move(kids);
  n->text = std::move(text);
  return n;
}

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : t_(std::move(tokens)) {}

  NodePtr parse() {
    auto n = test();
    if (peek().kind != Token::End) notEvaluated("'" + peek().text + "' where the expression should end");
    return n;
  }

 private:
  const Token& peek() const { return t_[i_]; }
  bool isOp(const char* op) const { return peek().kind == Token::Op && peek().text == op; }
  bool isWord(const char* w) const { return peek().kind == Token::Name && peek().text == w; }
  bool takeOp(const char* op) { return isOp(op) ? (++i_, true) : false; }
  bool takeWord(const char* w) { return isWord(w) ? (++i_, true) : false; }
  void expectOp(const char* op) {
    if (!takeOp(op)) notEvaluated(std::string("a missing '") + op + "'");
  }

  NodePtr test() {
    if (isWord("lambda")) notEvaluated("a lambda (a Python function)");
    auto body = orTest();
    if (!takeWord("if")) return body;
    auto condition = orTest();
    if (!takeWord("else")) notEvaluated("an 'if' without 'else'");
    return node(Node::IfElse, {condition, body, test()});
  }
  NodePtr orTest() {
    auto n = andTest();
    while (takeWord("or")) n = node(Node::Or, {n, andTest()});
    return n;
  }
  NodePtr andTest() {
    auto n = notTest();
    while (takeWord("and")) n = node(Node::And, {n, notTest()});
    return n;
  }
  NodePtr notTest() { return takeWord("not") ? node(Node::Not, {notTest()}) : comparison(); }

  NodePtr comparison() {
    auto first = arith();
    auto n = node(Node::Compare, {first});
    for (;;) {
      std::string op;
      if (peek().kind == Token::Op && (peek().text == "==" || peek().text == "!=" || peek().text == "<" ||
                                       peek().text == ">" || peek().text == "<=" || peek().text == ">=")) {
        op = t_[i_++].text;
      } else if (takeWord("in")) {
        op = "in";
      } else if (isWord("not") && t_[i_ + 1].kind == Token::Name && t_[i_ + 1].text == "in") {
        i_ += 2;
        op = "not in";
      } else if (takeWord("is")) {
        op = takeWord("not") ? "is not" : "is";
      } else {
        break;
      }
      n->ops.push_back(op);
      n->kids.push_back(arith());
    }
    return n->ops.empty() ? first : n;
  }
  NodePtr arith() {
    auto n = term();
    while (isOp("+") || isOp("-")) {
      const std::string op = t_[i_++].text;
      n = node(Node::Binary, {n, term()}, op);
    }
    return n;
  }
  NodePtr term() {
    auto n = factor();
    while (isOp("*") || isOp("/") || isOp("//") || isOp("%")) {
      const std::string op = t_[i_++].text;
      n = node(Node::Binary, {n, factor()}, op);
    }
    return n;
  }
  NodePtr factor() {
    if (takeOp("-")) return node(Node::Negate, {factor()});
    if (takeOp("+")) return node(Node::Plus, {factor()});
    auto base = primary();
    if (takeOp("**")) return node(Node::Binary, {base, factor()}, "**");
    return base;
  }

  NodePtr primary() {
    auto n = atom();
    for (;;) {
      if (takeOp(".")) {
        if (peek().kind != Token::Name) notEvaluated("a '.' without a name after it");
        const std::string attribute = t_[i_++].text;
        if (n->kind != Node::Name) notEvaluated("the attribute ." + attribute + " of a value");
        n->text += "." + attribute;
      } else if (takeOp("(")) {
        if (n->kind != Node::Name) notEvaluated("a call of a value (a method or a component)");
        n = node(Node::Call, arguments(n->text), n->text);
      } else if (takeOp("[")) {
        n = subscript(n);
      } else {
        return n;
      }
    }
  }

  std::vector<NodePtr> arguments(const std::string& function) {
    std::vector<NodePtr> args;
    while (!takeOp(")")) {
      if (!args.empty()) expectOp(",");
      if (takeOp(")")) break;
      if (peek().kind == Token::Name && t_[i_ + 1].kind == Token::Op && t_[i_ + 1].text == "=")
        notEvaluated("the keyword argument " + peek().text + "= of " + function + "(...)");
      if (isOp("*") || isOp("**")) notEvaluated("unpacked arguments of " + function + "(...)");
      args.push_back(test());
    }
    return args;
  }

  NodePtr subscript(const NodePtr& object) {
    NodePtr from = isOp(":") ? nullptr : test();
    if (!takeOp(":")) {
      expectOp("]");
      return node(Node::Index, {object, from});
    }
    NodePtr to = isOp("]") ? nullptr : test();
    if (isOp(":")) notEvaluated("a slice with a step");
    expectOp("]");
    return node(Node::Slice, {object, from, to});
  }

  NodePtr atom() {
    const Token& t = peek();
    if (t.kind == Token::End) notEvaluated("an expression that ends too early");
    ++i_;
    if (t.kind == Token::Number) {
      auto n = node(Node::Literal);
      n->value = t.number;
      return n;
    }
    if (t.kind == Token::String) {
      std::string text = t.text;
      while (peek().kind == Token::String) text += t_[i_++].text;  // 'a' 'b' is 'ab'
      auto n = node(Node::Literal);
      n->value = text;
      return n;
    }
    if (t.kind == Token::Reference) return node(Node::Reference, {}, t.text);
    if (t.kind == Token::Name) return nameAtom(t.text);
    if (t.text == "[") return sequence("]", Node::List);
    if (t.text == "(") return sequence(")", Node::Tuple);
    notEvaluated("'" + t.text + "' where a value should be");
  }

  NodePtr nameAtom(const std::string& name) {
    auto n = node(Node::Literal);
    if (name == "True") n->value = true;
    else if (name == "False") n->value = false;
    else if (name == "None") n->value = nullptr;
    else if (name == "import" || name == "from") notEvaluated("an import statement");
    else if (name == "for" || name == "while" || name == "def" || name == "yield" || name == "await")
      notEvaluated("the statement '" + name + "'");
    else return node(Node::Name, {}, name);
    return n;
  }

  // [a, b] or (a, b); "(a)" without a comma is a parenthesised value.
  NodePtr sequence(const char* close, Node::Kind kind) {
    auto n = node(kind);
    bool comma = false;
    while (!takeOp(close)) {
      if (!n->kids.empty() && !comma) notEvaluated(std::string("a missing '") + close + "' or ','");
      n->kids.push_back(test());
      if (isWord("for")) notEvaluated("a comprehension (for ... in ...)");
      comma = takeOp(",");
    }
    if (kind == Node::Tuple && n->kids.size() == 1 && !comma) return n->kids[0];
    return n;
  }

  std::vector<Token> t_;
  size_t i_ = 0;
};

// --- values -------------------------------------------------------------------------------------------

// A dtype named in an expression, held apart from strings so "torch.float32" + "x" is not text.
const char* const kDtypeKey = "$dtype";
bool isDtype(const json& v) { return v.is_object() && v.size() == 1 && v.contains(kDtypeKey); }

bool numeric(const json& v) { return v.is_number() || v.is_boolean(); }
bool integral(const json& v) { return v.is_number_integer() || v.is_boolean(); }
int64_t asInt(const json& v) { return v.is_boolean() ? int64_t(v.get<bool>()) : v.get<int64_t>(); }
double asDouble(const json& v) { return v.is_boolean() ? double(v.get<bool>()) : v.get<double>(); }

std::string typeName(const json& v) {
  if (isDtype(v)) return "a dtype";
  if (v.is_null()) return "None";
  if (v.is_boolean()) return "a bool";
  if (v.is_number_integer()) return "an int";
  if (v.is_number()) return "a float";
  if (v.is_string()) return "a str";
  if (v.is_array()) return "a list";
  return "a component or mapping";
}

bool truthy(const json& v) {
  if (v.is_null()) return false;
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number()) return v.get<double>() != 0.0;
  if (v.is_string() || v.is_array() || v.is_object()) return !v.empty();
  return true;
}

bool equal(const json& a, const json& b) {
  if (numeric(a) && numeric(b)) return asDouble(a) == asDouble(b);
  if (a.is_array() && b.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!equal(a[i], b[i])) return false;
    return true;
  }
  return a == b;
}

[[noreturn]] void unsupported(const std::string& op, const json& a, const json& b) {
  notEvaluated("'" + op + "' between " + typeName(a) + " and " + typeName(b) + " (Python fails on it too)");
}

json repeated(const json& sequence, int64_t times) {
  json out = sequence.is_string() ? json("") : json::array();
  for (int64_t k = 0; k < times; ++k) {
    if (sequence.is_string()) out = out.get<std::string>() + sequence.get<std::string>();
    else out.insert(out.end(), sequence.begin(), sequence.end());
  }
  return out;
}

// Python's floor division and modulo (the remainder takes the divisor's sign).
json floorDivide(const json& a, const json& b, bool remainder) {
  if (asDouble(b) == 0.0) notEvaluated("a division by zero");
  if (integral(a) && integral(b)) {
    const int64_t x = asInt(a), y = asInt(b);
    int64_t q = x / y;
    if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
    return remainder ? json(x - q * y) : json(q);
  }
  const double x = asDouble(a), y = asDouble(b), q = std::floor(x / y);
  return remainder ? json(x - q * y) : json(q);
}

json power(const json& a, const json& b) {
  if (integral(a) && integral(b) && asInt(b) >= 0) {
    int64_t out = 1;
    for (int64_t k = 0; k < asInt(b); ++k) out *= asInt(a);
    return out;
  }
  if (asDouble(a) == 0.0 && asDouble(b) < 0) notEvaluated("a division by zero");
  return std::pow(asDouble(a), asDouble(b));
}

json arithmetic(const std::string& op, const json& a, const json& b) {
  if (numeric(a) && numeric(b)) {
    const bool ints = integral(a) && integral(b);
    if (op == "+") return ints ? json(asInt(a) + asInt(b)) : json(asDouble(a) + asDouble(b));
    if (op == "-") return ints ? json(asInt(a) - asInt(b)) : json(asDouble(a) - asDouble(b));
    if (op == "*") return ints ? json(asInt(a) * asInt(b)) : json(asDouble(a) * asDouble(b));
    if (op == "/") {
      if (asDouble(b) == 0.0) notEvaluated("a division by zero");
      return asDouble(a) / asDouble(b);
    }
    if (op == "//" || op == "%") return floorDivide(a, b, op == "%");
    if (op == "**") return power(a, b);
  }
  if (op == "+" && a.is_string() && b.is_string()) return a.get<std::string>() + b.get<std::string>();
  if (op == "+" && a.is_array() && b.is_array()) {
    json out = a;
    out.insert(out.end(), b.begin(), b.end());
    return out;
  }
  if (op == "*" && (a.is_string() || a.is_array()) && integral(b)) return repeated(a, asInt(b));
  if (op == "*" && integral(a) && (b.is_string() || b.is_array())) return repeated(b, asInt(a));
  unsupported(op, a, b);
}

bool ordered(const std::string& op, const json& a, const json& b) {
  int sign = 0;
  if (numeric(a) && numeric(b)) sign = asDouble(a) < asDouble(b) ? -1 : (asDouble(a) > asDouble(b) ? 1 : 0);
  else if (a.is_string() && b.is_string()) sign = a.get<std::string>().compare(b.get<std::string>());
  else unsupported(op, a, b);
  if (op == "<") return sign < 0;
  if (op == "<=") return sign <= 0;
  if (op == ">") return sign > 0;
  return sign >= 0;
}

bool contains(const json& container, const json& item) {
  if (container.is_string() && item.is_string())
    return container.get<std::string>().find(item.get<std::string>()) != std::string::npos;
  if (container.is_array()) {
    for (const auto& e : container)
      if (equal(e, item)) return true;
    return false;
  }
  if (container.is_object() && !isDtype(container) && item.is_string()) return container.contains(item.get<std::string>());
  unsupported("in", item, container);
}

bool compared(const std::string& op, const json& a, const json& b) {
  if (op == "==") return equal(a, b);
  if (op == "!=") return !equal(a, b);
  if (op == "in") return contains(b, a);
  if (op == "not in") return !contains(b, a);
  if (op == "is" || op == "is not") {
    // Identity is only certain for None, True and False (singletons in Python).
    if (!(b.is_null() || b.is_boolean())) notEvaluated("'" + op + "' with " + typeName(b) + " (only 'is None' and 'is True / False')");
    const bool same = a.type() == b.type() && a == b;
    return op == "is" ? same : !same;
  }
  return ordered(op, a, b);
}

// x[i] of a list or string (negative counts from the end), x['key'] of a mapping.
json indexed(const json& object, const json& index) {
  if (object.is_object() && !isDtype(object) && index.is_string()) {
    if (!object.contains(index.get<std::string>())) notEvaluated("the missing key '" + index.get<std::string>() + "'");
    return object[index.get<std::string>()];
  }
  if (!(object.is_array() || object.is_string()) || !integral(index)) unsupported("[]", object, index);
  const int64_t size = object.is_string() ? int64_t(object.get<std::string>().size()) : int64_t(object.size());
  int64_t i = asInt(index);
  if (i < 0) i += size;
  if (i < 0 || i >= size) notEvaluated("an index out of range (Python fails on it too)");
  return object.is_string() ? json(object.get<std::string>().substr(size_t(i), 1)) : object[size_t(i)];
}

json sliced(const json& object, const json& from, const json& to) {
  if (!(object.is_array() || object.is_string())) notEvaluated("a slice of " + typeName(object));
  const int64_t size = object.is_string() ? int64_t(object.get<std::string>().size()) : int64_t(object.size());
  const auto bound = [size](const json& v, int64_t fallback) {
    if (v.is_null()) return fallback;
    if (!integral(v)) notEvaluated("a slice bound that is " + typeName(v));
    int64_t i = asInt(v);
    if (i < 0) i += size;
    return std::clamp<int64_t>(i, 0, size);
  };
  const int64_t a = bound(from, 0), b = std::max(a, bound(to, size));
  if (object.is_string()) return object.get<std::string>().substr(size_t(a), size_t(b - a));
  return json(std::vector<json>(object.begin() + a, object.begin() + b));
}

json extreme(const std::string& function, const std::vector<json>& args) {
  const json items = args.size() == 1 && args[0].is_array() ? args[0] : json(args);
  if (items.empty()) notEvaluated(function + "() of nothing (Python fails on it too)");
  json best = items[0];
  for (const auto& v : items)
    if (ordered(function == "min" ? "<" : ">", v, best)) best = v;
  return best;
}

json called(const std::string& function, const std::vector<json>& args) {
  const auto one = [&]() -> const json& {
    if (args.size() != 1) notEvaluated(function + "() with " + std::to_string(args.size()) + " arguments");
    return args[0];
  };
  if (function == "min" || function == "max") return extreme(function, args);
  const json& v = one();
  if (function == "len") {
    if (v.is_string()) return v.get<std::string>().size();
    if ((v.is_array() || v.is_object()) && !isDtype(v)) return v.size();
  } else if (function == "int") {
    if (numeric(v)) return integral(v) ? json(asInt(v)) : json(int64_t(std::trunc(asDouble(v))));
    if (v.is_string()) {
      try {
        size_t used = 0;
        const long long parsed = std::stoll(v.get<std::string>(), &used);
        if (used == v.get<std::string>().size()) return int64_t(parsed);
      } catch (const std::exception&) {
      }
    }
  } else if (function == "float") {
    if (numeric(v)) return asDouble(v);
  } else if (function == "bool") {
    return truthy(v);
  } else if (function == "abs") {
    if (numeric(v)) return integral(v) ? json(std::llabs(asInt(v))) : json(std::fabs(asDouble(v)));
  } else if (function == "round") {
    if (numeric(v)) return integral(v) ? json(asInt(v)) : json(int64_t(std::nearbyint(asDouble(v))));  // half to even
  } else if (function == "list" || function == "tuple") {
    if (v.is_array()) return v;
  }
  notEvaluated(function + "() of " + typeName(v));
}

class Evaluator {
 public:
  explicit Evaluator(const ItemLookup& lookup) : lookup_(lookup) {}

  json value(const Node& n) {
    switch (n.kind) {
      case Node::Literal: return n.value;
      case Node::Reference: return reference(n.text);
      case Node::Name: return name(n.text);
      case Node::List:
      case Node::Tuple: {
        json out = json::array();
        for (const auto& k : n.kids) out.push_back(value(*k));
        return out;
      }
      case Node::Negate: return arithmetic("-", json(0), number(value(*n.kids[0]), "-"));
      case Node::Plus: return arithmetic("+", json(0), number(value(*n.kids[0]), "+"));
      case Node::Binary: return arithmetic(n.text, value(*n.kids[0]), value(*n.kids[1]));
      case Node::Compare: return comparison(n);
      case Node::And: {
        json left = value(*n.kids[0]);
        return truthy(left) ? value(*n.kids[1]) : left;
      }
      case Node::Or: {
        json left = value(*n.kids[0]);
        return truthy(left) ? left : value(*n.kids[1]);
      }
      case Node::Not: return !truthy(value(*n.kids[0]));
      case Node::IfElse: return truthy(value(*n.kids[0])) ? value(*n.kids[1]) : value(*n.kids[2]);
      case Node::Call: {
        static const std::set<std::string> builtins{"len", "int", "float", "bool", "abs", "min", "max", "round", "list", "tuple"};
        if (!builtins.count(n.text)) notEvaluated("the call " + n.text + "(...)");
        std::vector<json> args;
        for (const auto& k : n.kids) args.push_back(value(*k));
        return called(n.text, args);
      }
      case Node::Index: return indexed(value(*n.kids[0]), value(*n.kids[1]));
      case Node::Slice:
        return sliced(value(*n.kids[0]), n.kids[1] ? value(*n.kids[1]) : json(), n.kids[2] ? value(*n.kids[2]) : json());
    }
    notEvaluated("an unknown form");
  }

 private:
  static const json& number(const json& v, const std::string& op) {
    if (!numeric(v)) notEvaluated("unary '" + op + "' of " + typeName(v));
    return v;
  }

  json comparison(const Node& n) {
    json left = value(*n.kids[0]);
    for (size_t i = 0; i < n.ops.size(); ++i) {  // a < b < c is a < b and b < c
      json right = value(*n.kids[i + 1]);
      if (!compared(n.ops[i], left, right)) return false;
      left = std::move(right);
    }
    return true;
  }

  json reference(const std::string& id) {
    auto item = lookup_(id);
    if (!item) notEvaluated("@" + id + ", which refers to no item of the config");
    // A "$" text the item kept is an expression MedSeg did not evaluate.
    if (item->is_string() && !item->get<std::string>().empty() && item->get<std::string>()[0] == '$' &&
        !dtypeName(*item))
      notEvaluated("@" + id + ", whose value \"" + item->get<std::string>() + "\" is not evaluated");
    if (auto dtype = dtypeName(*item); dtype && item->get<std::string>()[0] == '$') return json{{kDtypeKey, item->get<std::string>().substr(1)}};
    return *item;
  }

  static json name(const std::string& dotted) {
    if (dotted.find('.') != std::string::npos && dtypeName(json("$" + dotted))) return json{{kDtypeKey, dotted}};
    notEvaluated("the name " + dotted);
  }

  const ItemLookup& lookup_;
};

// Dtypes back to the text MONAI's configs write them as ("$torch.float32").
json asConfigValue(const json& v) {
  if (isDtype(v)) return "$" + v[kDtypeKey].get<std::string>();
  if (!v.is_array()) return v;
  json out = json::array();
  for (const auto& e : v) out.push_back(asConfigValue(e));
  return out;
}

}  // namespace

Evaluated evaluateExpression(const std::string& expression, const ItemLookup& lookup) {
  try {
    const NodePtr root = Parser(Lexer(expression).tokens()).parse();
    return {asConfigValue(Evaluator(lookup).value(*root)), ""};
  } catch (const NotEvaluated& e) {
    return {std::nullopt, e.why};
  }
}

std::string expressionProblem(const std::string& expression) {
  try {
    Parser(Lexer(expression).tokens()).parse();
    return "";
  } catch (const NotEvaluated& e) {
    return e.why;
  }
}

}  // namespace medseg::torchscript
