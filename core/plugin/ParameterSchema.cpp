#include "core/plugin/ParameterSchema.h"

#include <algorithm>
#include <cmath>
#include <regex>
#include <set>
#include <sstream>

#include "core/plugin/CommonParameters.h"
#include "core/plugin/PluginError.h"
#include "core/util/Text.h"

namespace medseg::plugin {
namespace {

using nlohmann::json;

struct TypeName {
  ParameterType type;
  const char* name;
};
constexpr TypeName kTypes[] = {{ParameterType::Integer, "integer"},         {ParameterType::Number, "number"},
                               {ParameterType::Boolean, "boolean"},         {ParameterType::Choice, "choice"},
                               {ParameterType::String, "string"},           {ParameterType::File, "file"},
                               {ParameterType::Folder, "folder"},           {ParameterType::IntegerList, "integer-list"},
                               {ParameterType::NumberList, "number-list"},  {ParameterType::StringList, "string-list"}};

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) items.push_back(trimmed(item, " \t"));
  if (!text.empty() && text.back() == ',') items.emplace_back();
  return items;
}

std::optional<int64_t> wholeNumberText(const std::string& text) {
  static const std::regex pattern(R"(^[+-]?\d{1,18}$)");
  if (!std::regex_match(text, pattern)) return std::nullopt;
  return std::stoll(text);
}

std::string joinedNames(const std::vector<std::string>& names) {
  const std::string out = joinedWithCommas(names);
  return out.empty() ? "none" : out;
}

std::string numberText(double value) {
  std::ostringstream s;
  s << value;
  return s.str();
}

}  // namespace

const char* parameterTypeName(ParameterType type) {
  for (const auto& entry : kTypes)
    if (entry.type == type) return entry.name;
  return "string";
}

ParameterType parseParameterType(const std::string& name) {
  std::string known;
  for (const auto& entry : kTypes) {
    if (name == entry.name) return entry.type;
    known += (known.empty() ? "" : ", ") + std::string(entry.name);
  }
  throw PluginError("parameter type \"" + name + "\" is not one of " + known);
}

json ParameterSpec::toJson() const {
  json out{{"name", name}, {"type", parameterTypeName(type)}, {"label", label.empty() ? name : label}, {"default", defaultValue}};
  if (!help.empty()) out["help"] = help;
  if (!unit.empty()) out["unit"] = unit;
  if (minimum) out["minimum"] = *minimum;
  if (maximum) out["maximum"] = *maximum;
  if (!choices.empty()) out["choices"] = choices;
  if (!lengths.empty()) out["lengths"] = lengths;
  if (!filter.empty()) out["filter"] = filter;
  if (advanced) out["advanced"] = true;
  return out;
}

ParameterSpec ParameterSpec::fromJson(const json& in) {
  if (!in.is_object()) throw PluginError("a parameter must be an object {\"name\", \"type\", ...}");
  static const std::regex namePattern(R"(^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$)");
  ParameterSpec spec;
  if (!in.contains("name") || !in["name"].is_string() || !std::regex_match(in["name"].get<std::string>(), namePattern))
    throw PluginError("a parameter needs a \"name\" of lower-case letters, digits, '_' and '.' (found " +
                      (in.contains("name") ? in["name"].dump() : std::string("none")) + ")");
  spec.name = in["name"].get<std::string>();
  const std::string where = "parameter \"" + spec.name + "\": ";
  auto text = [&](const char* key) -> std::string {
    if (!in.contains(key)) return {};
    if (!in[key].is_string()) throw PluginError(where + "\"" + key + "\" must be a string");
    return in[key].get<std::string>();
  };
  auto bound = [&](const char* key) -> std::optional<double> {
    if (!in.contains(key) || in[key].is_null()) return std::nullopt;
    if (!in[key].is_number()) throw PluginError(where + "\"" + key + "\" must be a number");
    return in[key].get<double>();
  };
  if (!in.contains("type") || !in["type"].is_string()) throw PluginError(where + "needs a \"type\"");
  try {
    spec.type = parseParameterType(in["type"].get<std::string>());
  } catch (const PluginError& error) {
    throw PluginError(where + error.what());
  }
  spec.label = text("label");
  spec.help = text("help");
  spec.unit = text("unit");
  spec.filter = text("filter");
  spec.minimum = bound("minimum");
  spec.maximum = bound("maximum");
  if (spec.minimum && spec.maximum && *spec.minimum > *spec.maximum)
    throw PluginError(where + "\"minimum\" is above \"maximum\"");
  if (in.contains("advanced")) {
    if (!in["advanced"].is_boolean()) throw PluginError(where + "\"advanced\" must be true or false");
    spec.advanced = in["advanced"].get<bool>();
  }
  if (in.contains("choices")) {
    if (!in["choices"].is_array() || in["choices"].empty()) throw PluginError(where + "\"choices\" must be a non-empty list");
    for (const auto& choice : in["choices"]) {
      if (!choice.is_string()) throw PluginError(where + "every choice must be a string");
      spec.choices.push_back(choice.get<std::string>());
    }
  }
  if (spec.type == ParameterType::Choice && spec.choices.empty()) throw PluginError(where + "a choice needs \"choices\"");
  if (in.contains("lengths")) {
    if (!in["lengths"].is_array()) throw PluginError(where + "\"lengths\" must be a list of counts");
    for (const auto& length : in["lengths"]) {
      if (!length.is_number_integer() || length.get<int>() < 1) throw PluginError(where + "\"lengths\" must hold counts >= 1");
      spec.lengths.push_back(length.get<int>());
    }
  }
  spec.defaultValue = in.contains("default") ? in["default"] : json();
  if (!spec.defaultValue.is_null()) {
    try {
      spec.check(spec.defaultValue);
    } catch (const PluginError& error) {
      throw PluginError(std::string("the default of ") + error.what());
    }
  }
  return spec;
}

json ParameterSpec::parseText(const std::string& raw) const {
  const std::string text = trimmed(raw, " \t");
  const std::string where = "parameter \"" + name + "\" (" + parameterTypeName(type) + "): ";
  json value;
  switch (type) {
    case ParameterType::Integer: {
      const auto number = wholeNumberText(text);
      if (!number) throw PluginError(where + "\"" + text + "\" is not a whole number");
      value = *number;
      break;
    }
    case ParameterType::Number: {
      size_t used = 0;
      double number = 0;
      try {
        number = std::stod(text, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (text.empty() || used != text.size() || !std::isfinite(number))
        throw PluginError(where + "\"" + text + "\" is not a finite number");
      value = number;
      break;
    }
    case ParameterType::Boolean: {
      std::string lower = text;
      std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
      if (lower == "true" || lower == "1" || lower == "yes" || lower == "on") value = true;
      else if (lower == "false" || lower == "0" || lower == "no" || lower == "off") value = false;
      else throw PluginError(where + "\"" + text + "\" is not true or false");
      break;
    }
    case ParameterType::IntegerList: {
      value = json::array();
      for (const auto& item : splitList(text)) {
        const auto number = wholeNumberText(item);
        if (!number) throw PluginError(where + "\"" + text + "\" is not a comma-separated list of whole numbers");
        value.push_back(*number);
      }
      break;
    }
    case ParameterType::NumberList: {
      value = json::array();
      for (const auto& item : splitList(text)) {
        size_t used = 0;
        double number = 0;
        try {
          number = std::stod(item, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (item.empty() || used != item.size() || !std::isfinite(number))
          throw PluginError(where + "\"" + text + "\" is not a comma-separated list of numbers");
        value.push_back(number);
      }
      break;
    }
    case ParameterType::StringList:
      value = json::array();
      for (const auto& item : splitList(text)) value.push_back(item);
      break;
    default:
      value = text;
  }
  check(value);
  return value;
}

void ParameterSpec::check(const json& value) const {
  const std::string where = "parameter \"" + name + "\" (" + parameterTypeName(type) + "): ";
  auto inRange = [&](double number) {
    if ((minimum && number < *minimum) || (maximum && number > *maximum))
      throw PluginError(where + numberText(number) + " is outside [" + (minimum ? numberText(*minimum) : "-inf") + ", " +
                        (maximum ? numberText(*maximum) : "inf") + "]" + (unit.empty() ? "" : " " + unit));
  };
  auto counted = [&](const json& list) {
    if (!list.is_array()) throw PluginError(where + value.dump() + " is not a list");
    if (!lengths.empty() && std::find(lengths.begin(), lengths.end(), static_cast<int>(list.size())) == lengths.end()) {
      std::string allowed;
      for (int length : lengths) allowed += (allowed.empty() ? "" : " or ") + std::to_string(length);
      throw PluginError(where + "takes " + allowed + " value(s), " + std::to_string(list.size()) + " given");
    }
  };
  switch (type) {
    case ParameterType::Integer:
      if (!value.is_number_integer()) throw PluginError(where + value.dump() + " is not a whole number");
      inRange(value.get<double>());
      return;
    case ParameterType::Number:
      if (!value.is_number()) throw PluginError(where + value.dump() + " is not a number");
      inRange(value.get<double>());
      return;
    case ParameterType::Boolean:
      if (!value.is_boolean()) throw PluginError(where + value.dump() + " is not true or false");
      return;
    case ParameterType::Choice:
      if (!value.is_string() || std::find(choices.begin(), choices.end(), value.get<std::string>()) == choices.end())
        throw PluginError(where + value.dump() + " is not one of " + joinedNames(choices));
      return;
    case ParameterType::IntegerList:
      counted(value);
      for (const auto& item : value) {
        if (!item.is_number_integer()) throw PluginError(where + value.dump() + " holds a value that is not a whole number");
        inRange(item.get<double>());
      }
      return;
    case ParameterType::NumberList:
      counted(value);
      for (const auto& item : value) {
        if (!item.is_number()) throw PluginError(where + value.dump() + " holds a value that is not a number");
        inRange(item.get<double>());
      }
      return;
    case ParameterType::StringList:
      counted(value);
      for (const auto& item : value)
        if (!item.is_string() || item.get<std::string>().empty())
          throw PluginError(where + value.dump() + " holds an empty or non-text entry");
      return;
    default:
      if (!value.is_string()) throw PluginError(where + value.dump() + " is not text");
  }
}

ParameterSchema::ParameterSchema(std::vector<ParameterSpec> specs) : specs_(std::move(specs)) {}

ParameterSchema ParameterSchema::fromJson(const json& list) {
  if (list.is_null()) return {};
  if (!list.is_array()) throw PluginError("parameters must be a list of {\"name\", \"type\", ...} objects");
  std::vector<ParameterSpec> specs;
  std::set<std::string> names;
  for (const auto& entry : list) {
    specs.push_back(ParameterSpec::fromJson(expandCommonParameter(entry)));
    if (!names.insert(specs.back().name).second) throw PluginError("parameter \"" + specs.back().name + "\" is declared twice");
  }
  return ParameterSchema(std::move(specs));
}

json ParameterSchema::toJson() const {
  json list = json::array();
  for (const auto& spec : specs_) list.push_back(spec.toJson());
  return list;
}

const ParameterSpec* ParameterSchema::find(const std::string& name) const {
  for (const auto& spec : specs_)
    if (spec.name == name) return &spec;
  return nullptr;
}

namespace {
PluginError unknownParameter(const ParameterSchema& schema, const std::string& name, const std::string& owner) {
  std::vector<std::string> names;
  for (const auto& spec : schema.specs()) names.push_back(spec.name);
  return PluginError(owner + " have no \"" + name + "\" (they are: " + joinedNames(names) + ")");
}
}  // namespace

std::pair<std::string, json> ParameterSchema::parseAssignment(const std::string& assignment, const std::string& owner) const {
  const auto equals = assignment.find('=');
  if (equals == std::string::npos || equals == 0)
    throw PluginError("\"" + assignment + "\" is not name=value (" + owner + ")");
  const std::string name = trimmed(assignment.substr(0, equals), " \t");
  const ParameterSpec* spec = find(name);
  if (!spec) throw unknownParameter(*this, name, owner);
  return {name, spec->parseText(assignment.substr(equals + 1))};
}

json ParameterSchema::parseAssignments(const std::vector<std::string>& assignments, const std::string& owner) const {
  json given = json::object();
  for (const auto& assignment : assignments) {
    auto [name, value] = parseAssignment(assignment, owner);
    given[name] = value;
  }
  return given;
}

json ParameterSchema::resolve(const json& given, const std::string& owner) const {
  if (!given.is_null() && !given.is_object()) throw PluginError(owner + " must be given as an object {name: value}");
  json resolved = json::object();
  for (const auto& spec : specs_) resolved[spec.name] = spec.defaultValue;
  if (given.is_null()) return resolved;
  for (const auto& [name, value] : given.items()) {
    const ParameterSpec* spec = find(name);
    if (!spec) throw unknownParameter(*this, name, owner);
    if (!value.is_null()) spec->check(value);
    resolved[name] = value;
  }
  return resolved;
}

}  // namespace medseg::plugin
