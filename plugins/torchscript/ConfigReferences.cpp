#include "plugins/torchscript/ConfigReferences.h"

#include <cctype>
#include <set>

#include "core/util/Interrupt.h"
#include "plugins/torchscript/ConfigExpression.h"

namespace medseg::torchscript {
namespace {

using nlohmann::json;

constexpr int kMaxReferenceDepth = 32;

bool isDisabled(const json& item) {
  if (!item.is_object() || !item.contains("_target_") || !item.contains("_disabled_")) return false;
  const json& flag = item["_disabled_"];
  if (flag.is_string()) {  // MONAI: _disabled_.lower().strip() == "true"
    std::string text = flag.get<std::string>();
    for (auto& c : text) c = char(std::tolower(static_cast<unsigned char>(c)));
    const size_t first = text.find_first_not_of(" \t\n\r\f\v"), last = text.find_last_not_of(" \t\n\r\f\v");
    return first != std::string::npos && text.substr(first, last - first + 1) == "true";
  }
  if (flag.is_boolean()) return flag.get<bool>();
  return flag.is_number() ? flag.get<double>() != 0 : !flag.is_null() && !flag.empty();
}

// MONAI's reference pattern, the whole string: "@" then word characters, parts separated by "::" or "#".
bool isReferenceText(const std::string& text) {
  if (text.size() < 2 || text[0] != '@') return false;
  for (size_t i = 1; i < text.size(); ++i) {
    const char c = text[i];
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '#') continue;
    if (c == ':' && i + 1 < text.size() && text[i + 1] == ':') {
      ++i;
      continue;
    }
    return false;
  }
  return true;
}

// The item at `parts`, or nullptr when there is none.
const json* itemAt(const std::vector<std::string>& parts, const json& config) {
  const json* node = &config;
  for (const auto& part : parts) {
    if (node->is_object() && node->contains(part)) {
      node = &(*node)[part];
    } else if (node->is_array() && !part.empty() && part.size() < 10 &&
               part.find_first_not_of("0123456789") == std::string::npos && std::stoul(part) < node->size()) {
      node = &(*node)[std::stoul(part)];
    } else {
      return nullptr;
    }
  }
  return node;
}

class Resolver {
 public:
  Resolver(const json& config, const std::string& where) : config_(config), where_(where) {}

  json resolve(const json& value) {
    if (value.is_string()) return text(value);
    if (value.is_array()) {
      json out = json::array();
      for (const auto& item : value)
        if (!isDisabled(item)) out.push_back(resolve(item));
      return out;
    }
    if (value.is_object()) {
      json out = json::object();
      for (const auto& [key, item] : value.items())
        if (!isDisabled(item)) out[key] = resolve(item);
      return out;
    }
    return value;
  }

 private:
  json text(const json& value) {
    const std::string& text = value.get_ref<const std::string&>();
    if (isReferenceText(text)) {
      auto item = follow(text.substr(1));
      return item ? *item : value;  // a reference to nothing stays text (refused where it is needed)
    }
    if (text.size() > 1 && text[0] == '$') {
      const Evaluated e = evaluateExpression(text.substr(1), [this](const std::string& id) { return follow(id); });
      if (e.value) return *e.value;
    }
    return value;
  }

  std::optional<json> follow(const std::string& id) {
    const auto parts = idParts(id);
    const json* item = itemAt(parts, config_);
    if (!item) return std::nullopt;
    if (isDisabled(*item)) return json(nullptr);
    std::string key;
    for (const auto& p : parts) key += (key.empty() ? "" : "::") + p;
    if (visiting_.count(key))
      throw InputError(where_ + ": the reference @" + id + " leads back to itself (MONAI refuses circular references too)");
    if (visiting_.size() >= kMaxReferenceDepth)
      throw InputError(where_ + ": references nest deeper than " + std::to_string(kMaxReferenceDepth));
    visiting_.insert(key);
    json out = resolve(*item);
    visiting_.erase(key);
    return out;
  }

  const json& config_;
  const std::string& where_;
  std::set<std::string> visiting_;
};

}  // namespace

std::vector<std::string> idParts(const std::string& id) {
  std::string normal = id;
  for (size_t hash = normal.find('#'); hash != std::string::npos; hash = normal.find('#', hash))
    normal.replace(hash, 1, "::");
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t cut = normal.find("::"); cut != std::string::npos; cut = normal.find("::", start)) {
    parts.push_back(normal.substr(start, cut - start));
    start = cut + 2;
  }
  parts.push_back(normal.substr(start));
  return parts;
}

json resolveReferences(const json& value, const json& config, const std::string& where) {
  return Resolver(config, where).resolve(value);
}

bool isPythonExpression(const json& value) {
  return value.is_string() && !value.get_ref<const std::string&>().empty() && value.get_ref<const std::string&>()[0] == '$';
}

bool isDanglingReference(const json& value) { return value.is_string() && isReferenceText(value.get<std::string>()); }

std::string whyNotEvaluated(const std::string& expression) {
  const std::string body = !expression.empty() && expression[0] == '$' ? expression.substr(1) : expression;
  const std::string problem = expressionProblem(body);
  return problem.empty() ? "a reference to an item MedSeg could not evaluate" : problem;
}

}  // namespace medseg::torchscript
