#include "plugins/torchscript/PyYaml.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <regex>

#include <yaml-cpp/yaml.h>

#include "core/util/Interrupt.h"

namespace medseg::torchscript {
namespace {

using nlohmann::json;

constexpr size_t kMaxDepth = 64;

// PyYAML's implicit resolvers (yaml/resolver.py), in its order of precedence.
const std::regex kBool("yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF");
const std::regex kFloat(
    "[-+]?(?:[0-9][0-9_]*)\\.[0-9_]*(?:[eE][-+][0-9]+)?|\\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?"
    "|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\\.[0-9_]*|[-+]?\\.(?:inf|Inf|INF)|\\.(?:nan|NaN|NAN)");
const std::regex kInt(
    "[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+");
const std::regex kNull("~|null|Null|NULL|");

std::string withoutUnderscores(std::string text) {
  text.erase(std::remove(text.begin(), text.end(), '_'), text.end());
  return text;
}

// "1:30:15" -> 1 * 3600 + 30 * 60 + 15 (PyYAML's base 60).
double base60(const std::string& text) {
  double value = 0;
  size_t start = 0;
  for (size_t cut = text.find(':');; cut = text.find(':', start)) {
    value = value * 60 + std::stod(text.substr(start, cut - start));
    if (cut == std::string::npos) break;
    start = cut + 1;
  }
  return value;
}

json integer(std::string text) {
  text = withoutUnderscores(text);
  const int64_t sign = text[0] == '-' ? -1 : 1;
  if (text[0] == '-' || text[0] == '+') text.erase(0, 1);
  if (text == "0") return 0;
  if (text.rfind("0b", 0) == 0) return sign * std::stoll(text.substr(2), nullptr, 2);
  if (text.rfind("0x", 0) == 0) return sign * std::stoll(text.substr(2), nullptr, 16);
  if (text[0] == '0') return sign * std::stoll(text, nullptr, 8);
  if (text.find(':') != std::string::npos) return sign * int64_t(base60(text));
  return sign * std::stoll(text);
}

json real(std::string text) {
  text = withoutUnderscores(text);
  std::string lower = text;
  for (auto& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
  const double sign = lower[0] == '-' ? -1.0 : 1.0;
  if (lower[0] == '-' || lower[0] == '+') lower.erase(0, 1);
  if (lower == ".inf") return sign * std::numeric_limits<double>::infinity();
  if (lower == ".nan") return std::numeric_limits<double>::quiet_NaN();
  if (lower.find(':') != std::string::npos) return sign * base60(lower);
  return sign * std::stod(lower);
}

class Converter {
 public:
  explicit Converter(const std::string& source) : source_(source) {}

  json convert(const YAML::Node& node, size_t depth) {
    if (depth > kMaxDepth) throw InputError(source_ + ": nested deeper than " + std::to_string(kMaxDepth) + " levels");
    switch (node.Type()) {
      case YAML::NodeType::Null:
      case YAML::NodeType::Undefined: return nullptr;
      case YAML::NodeType::Sequence: {
        json out = json::array();
        for (const auto& item : node) out.push_back(convert(item, depth + 1));
        return out;
      }
      case YAML::NodeType::Map: return mapping(node, depth);
      case YAML::NodeType::Scalar: return scalar(node);
    }
    return nullptr;
  }

 private:
  json scalar(const YAML::Node& node) {
    const std::string& tag = node.Tag();
    if (tag == "!" || tag == "tag:yaml.org,2002:str") return node.Scalar();  // quoted or !!str
    if (tag != "?" && !tag.empty())
      throw InputError(source_ + " line " + std::to_string(node.Mark().line + 1) + ": the tag " + tag +
                       " is not one MONAI's safe YAML loader reads: remove it");
    return pyYamlScalar(node.Scalar());
  }

  // "<<" merges the mappings it names beneath the mapping's own keys, as PyYAML's flatten_mapping does.
  json mapping(const YAML::Node& node, size_t depth) {
    json own = json::object(), merged = json::object();
    for (const auto& item : node) {
      const bool merge = item.first.Tag() == "?" && item.first.Scalar() == "<<";
      const json value = convert(item.second, depth + 1);
      if (!merge) {
        own[item.first.as<std::string>()] = value;
        continue;
      }
      const json sources = value.is_array() ? value : json::array({value});
      for (auto source = sources.rbegin(); source != sources.rend(); ++source) {  // earlier ones win
        if (!source->is_object())
          throw InputError(source_ + " line " + std::to_string(item.first.Mark().line + 1) + ": \"<<\" merges mappings only");
        for (const auto& [k, v] : source->items()) merged[k] = v;
      }
    }
    merged.update(own);
    return merged;
  }

  const std::string& source_;
};

}  // namespace

json pyYamlScalar(const std::string& text) {
  if (std::regex_match(text, kBool)) return text[0] == 'y' || text[0] == 'Y' || text[0] == 't' || text[0] == 'T' ||
                                            text == "on" || text == "On" || text == "ON";
  if (std::regex_match(text, kFloat)) return real(text);
  try {
    if (std::regex_match(text, kInt)) return integer(text);
  } catch (const std::out_of_range&) {
    return real(text);  // beyond 64 bits: Python's int is exact, a double is the nearest MedSeg holds
  }
  if (std::regex_match(text, kNull)) return nullptr;
  return text;
}

json pyYamlToJson(const std::string& text, const std::string& source) {
  try {
    const YAML::Node root = YAML::Load(text);
    return Converter(source).convert(root, 0);
  } catch (const YAML::Exception& error) {
    throw InputError(source + ": YAML syntax error at line " + std::to_string(error.mark.line + 1) + ": " + error.msg);
  }
}

}  // namespace medseg::torchscript
