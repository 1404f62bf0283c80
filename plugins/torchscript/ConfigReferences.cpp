#include "plugins/torchscript/ConfigReferences.h"

#include <cctype>

#include "core/util/Interrupt.h"

namespace medseg::torchscript {
namespace {

using nlohmann::json;

constexpr int kMaxReferenceHops = 16;

// A small recursive-descent reader of Python literals; any other text fails (nullopt).
class LiteralReader {
 public:
  explicit LiteralReader(const std::string& text) : text_(text) {}

  std::optional<json> read() {
    auto value = valueAt();
    skipSpace();
    if (!value || pos_ != text_.size()) return std::nullopt;
    return value;
  }

 private:
  void skipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool take(char c) {
    skipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool takeWord(const char* word) {
    skipSpace();
    const std::string w(word);
    if (text_.compare(pos_, w.size(), w) != 0) return false;
    const size_t end = pos_ + w.size();
    if (end < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_' || text_[end] == '.'))
      return false;
    pos_ = end;
    return true;
  }

  std::optional<json> valueAt() {
    skipSpace();
    if (pos_ >= text_.size()) return std::nullopt;
    const char c = text_[pos_];
    if (c == '[') return sequence('[', ']', false);
    if (c == '(') return sequence('(', ')', true);
    if (c == '\'' || c == '"') return quoted();
    if (takeWord("True")) return json(true);
    if (takeWord("False")) return json(false);
    if (takeWord("None")) return json(nullptr);
    return number();
  }

  // [a, b] or (a, b); "(a)" without a comma is a parenthesised value, not a tuple.
  std::optional<json> sequence(char open, char close, bool tuple) {
    take(open);
    json items = json::array();
    bool comma = false;
    while (!take(close)) {
      if (!items.empty() && !comma) return std::nullopt;
      auto item = valueAt();
      if (!item) return std::nullopt;
      items.push_back(*item);
      comma = take(',');
    }
    if (tuple && items.size() == 1 && !comma) return items[0];
    return items;
  }

  std::optional<json> quoted() {
    const char quote = text_[pos_++];
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\') return std::nullopt;  // escapes: leave it to Python
      out += text_[pos_++];
    }
    if (pos_ >= text_.size()) return std::nullopt;
    ++pos_;
    return json(out);
  }

  std::optional<json> number() {
    const size_t start = pos_;
    if (pos_ < text_.size() && (text_[pos_] == '-' || text_[pos_] == '+')) ++pos_;
    bool digits = false, fraction = false;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_, digits = true;
    if (pos_ < text_.size() && text_[pos_] == '.') {
      fraction = true;
      ++pos_;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_, digits = true;
    }
    if (!digits) return std::nullopt;
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      fraction = true;
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '-' || text_[pos_] == '+')) ++pos_;
      if (pos_ >= text_.size() || !std::isdigit(static_cast<unsigned char>(text_[pos_]))) return std::nullopt;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    }
    std::string token = text_.substr(start, pos_ - start);
    if (token[0] == '+') token.erase(0, 1);
    try {
      return fraction ? json(std::stod(token)) : json(std::stoll(token));
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }

  const std::string& text_;
  size_t pos_ = 0;
};

bool isDisabled(const json& item) {
  if (!item.is_object() || !item.contains("_target_") || !item.contains("_disabled_")) return false;
  const json& flag = item["_disabled_"];
  if (flag.is_boolean()) return flag.get<bool>();
  if (flag.is_string()) {
    std::string text = flag.get<std::string>();
    for (auto& c : text) c = char(std::tolower(static_cast<unsigned char>(c)));
    const size_t first = text.find_first_not_of(" \t\n"), last = text.find_last_not_of(" \t\n");
    return first != std::string::npos && text.substr(first, last - first + 1) == "true";
  }
  return flag.is_number() && flag.get<double>() != 0;
}

// "a#b::0" -> the item at that path, or nullptr when there is none.
const json* itemAt(const std::string& id, const json& config) {
  const json* node = &config;
  std::string rest = id;
  while (!rest.empty()) {
    size_t cut = rest.find('#');
    size_t skip = 1;
    const size_t colons = rest.find("::");
    if (colons != std::string::npos && (cut == std::string::npos || colons < cut)) cut = colons, skip = 2;
    const std::string part = rest.substr(0, cut);
    rest = cut == std::string::npos ? "" : rest.substr(cut + skip);
    if (node->is_object() && node->contains(part)) {
      node = &(*node)[part];
    } else if (node->is_array() && !part.empty() && part.find_first_not_of("0123456789") == std::string::npos &&
               std::stoul(part) < node->size()) {
      node = &(*node)[std::stoul(part)];
    } else {
      return nullptr;
    }
  }
  return node;
}

json resolve(const json& value, const json& config, const std::string& where, int hops);

// The item's value; a reference to nothing stays text (MONAI would take it from the command line),
// refused where a value is needed.
json followReference(const json& text, const std::string& id, const json& config, const std::string& where, int hops) {
  if (hops >= kMaxReferenceHops) throw InputError(where + ": references nest deeper than " + std::to_string(kMaxReferenceHops));
  const json* item = itemAt(id, config);
  if (!item) return text;
  return resolve(*item, config, where, hops + 1);
}

json resolveText(const json& value, const json& config, const std::string& where, int hops) {
  const std::string& text = value.get_ref<const std::string&>();
  // Relative ids ("@#key") are not followed: they stay text, refused where a value is needed.
  const auto reference = [](const std::string& id) { return !id.empty() && id[0] != '#' && id.rfind("::", 0) != 0; };
  if (text.size() > 1 && text[0] == '@' && reference(text.substr(1)))
    return followReference(value, text.substr(1), config, where, hops);
  if (text.size() > 2 && text.rfind("$@", 0) == 0 && reference(text.substr(2)) &&
      text.find_first_of(" +-*/()[],.") == std::string::npos)
    return followReference(value, text.substr(2), config, where, hops);
  if (text.size() > 1 && text[0] == '$') {
    if (auto literal = pythonLiteral(text.substr(1))) return *literal;
  }
  return value;
}

json resolve(const json& value, const json& config, const std::string& where, int hops) {
  if (value.is_string()) return resolveText(value, config, where, hops);
  if (value.is_array()) {
    json out = json::array();
    for (const auto& item : value)
      if (!isDisabled(item)) out.push_back(resolve(item, config, where, hops));
    return out;
  }
  if (value.is_object()) {
    json out = json::object();
    for (const auto& [key, item] : value.items())
      if (!isDisabled(item)) out[key] = resolve(item, config, where, hops);
    return out;
  }
  return value;
}

}  // namespace

std::optional<json> pythonLiteral(const std::string& text) {
  try {
    return json::parse(text);
  } catch (const json::exception&) {
    return LiteralReader(text).read();
  }
}

json resolveReferences(const json& value, const json& config, const std::string& where) {
  return resolve(value, config, where, 0);
}

bool isPythonExpression(const json& value) {
  return value.is_string() && !value.get_ref<const std::string&>().empty() && value.get_ref<const std::string&>()[0] == '$';
}

}  // namespace medseg::torchscript
