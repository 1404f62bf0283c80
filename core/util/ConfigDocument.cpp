#include "core/util/ConfigDocument.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"

namespace medseg {
namespace {

using nlohmann::json;

// Aliases let a few lines of YAML name the same node many times ("billion laughs"); every alias is
// expanded into JSON, so the expansion is bounded in nodes as well as in depth.
constexpr size_t kMaxYamlValues = 100000;  // a full config holds about a hundred
struct YamlBudget {
  size_t nodesLeft = kMaxYamlValues;
};

// config.json is JSON, which holds UTF-8 text only, but YAML scalars arrive as raw bytes.
const std::string& requireUtf8(const std::string& text) {
  try {
    (void)json(text).dump();
  } catch (const json::type_error&) {
    throw InputError("\"" + json(text).dump(-1, ' ', false, json::error_handler_t::replace) +
                     "\" is not valid UTF-8 text (configs are UTF-8)");
  }
  return text;
}

json yamlNodeToJson(const YAML::Node& node, YamlBudget& budget, size_t depth) {
  if (budget.nodesLeft-- == 0)
    throw InputError("more than " + std::to_string(kMaxYamlValues) + " values after expanding YAML aliases");
  if (depth > kMaxConfigDepth)
    throw InputError("nested deeper than " + std::to_string(kMaxConfigDepth) + " levels");
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Sequence: {
      json array = json::array();
      for (const auto& item : node) array.push_back(yamlNodeToJson(item, budget, depth + 1));
      return array;
    }
    case YAML::NodeType::Map: {
      json object = json::object();
      for (const auto& item : node)
        object[requireUtf8(item.first.as<std::string>())] = yamlNodeToJson(item.second, budget, depth + 1);
      return object;
    }
    case YAML::NodeType::Scalar:
      break;
  }
  const std::string& text = requireUtf8(node.Scalar());
  if (node.Tag() == "!") return text;  // quoted: always a string
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  if (text == "null" || text == "~" || text == "Null" || text == "NULL") return nullptr;
  // Numbers: the whole scalar must parse, so "1e-3" is a number and "3d" stays a string.
  try {
    size_t used = 0;
    const long long integer = std::stoll(text, &used, 10);
    if (used == text.size()) return static_cast<int64_t>(integer);
  } catch (const std::exception&) {
  }
  try {
    size_t used = 0;
    const double real = std::stod(text, &used);
    if (used == text.size()) return real;
  } catch (const std::exception&) {
  }
  return text;
}

}  // namespace

nlohmann::json yamlToJson(const std::string& text, const std::string& sourceName) {
  try {
    const YAML::Node root = YAML::Load(text);
    YamlBudget budget;
    return yamlNodeToJson(root, budget, 0);
  } catch (const YAML::Exception& error) {
    throw InputError(sourceName + ": YAML syntax error at line " + std::to_string(error.mark.line + 1) + ": " +
                     error.msg);
  } catch (const InputError& error) {
    throw InputError(sourceName + ": " + error.what());
  }
}

nlohmann::json parseConfigDocument(const std::string& text, ConfigSyntax syntax, const std::string& sourceName) {
  nlohmann::json document;
  if (syntax == ConfigSyntax::Yaml) {
    document = yamlToJson(text, sourceName);
  } else {
    try {
      document = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& error) {  // parse_error, or out_of_range for 1e999
      throw InputError(sourceName + ": JSON syntax error: " + error.what());
    }
  }
  if (document.is_null()) document = nlohmann::json::object();  // an empty file means all defaults
  if (!document.is_object()) throw InputError(sourceName + ": a training config must be a mapping of keys to values");
  return document;
}

nlohmann::json readConfigDocument(const std::filesystem::path& file) {
  if (!std::filesystem::is_regular_file(file))
    throw InputError("training config " + file.string() + " does not exist or is not a file");
  std::string text;
  try {
    text = readTextFile(file, 1u << 20);
  } catch (const std::runtime_error& error) {
    throw InputError("training config: " + std::string(error.what()));
  }
  std::string ext = file.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return parseConfigDocument(text, ext == ".yaml" || ext == ".yml" ? ConfigSyntax::Yaml : ConfigSyntax::Json,
                             file.string());
}

void applyOverride(nlohmann::json& document, const std::string& assignment) {
  const auto equals = assignment.find('=');
  if (equals == std::string::npos || equals == 0)
    throw InputError("--set expects key=value (for example optimizer.lr=3e-4), got \"" + assignment + "\"");
  const std::string key = assignment.substr(0, equals);
  const std::string valueText = assignment.substr(equals + 1);
  nlohmann::json value = valueText.empty() ? nlohmann::json(nullptr) : yamlToJson(valueText, "--set " + key);
  nlohmann::json* node = &document;
  std::stringstream parts(key);
  std::string part;
  std::vector<std::string> path;
  while (std::getline(parts, part, '.')) path.push_back(part);
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i].empty()) throw InputError("--set " + key + ": empty key component");
    if (!node->is_object()) throw InputError("--set " + key + ": \"" + path[i - 1] + "\" is not a section");
    if (i + 1 == path.size()) {
      (*node)[path[i]] = value;
    } else {
      if (!node->contains(path[i])) (*node)[path[i]] = nlohmann::json::object();
      node = &(*node)[path[i]];
    }
  }
}

}  // namespace medseg
