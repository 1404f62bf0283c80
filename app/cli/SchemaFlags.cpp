#include "app/cli/SchemaFlags.h"

#include <algorithm>

namespace medseg::cli {
namespace {

struct Declared {
  std::vector<const plugin::ParameterSpec*> specs;  // one per owner declaring the name
  std::vector<std::string> owners;
};

bool allBoolean(const Declared& d) {
  return std::all_of(d.specs.begin(), d.specs.end(), [](const auto* s) { return s->type == plugin::ParameterType::Boolean; });
}

// A boolean whose owners agree on its default is a switch: --name turns on what is off by default,
// --no-name turns off what is on.
std::optional<bool> agreedDefault(const Declared& d) {
  const nlohmann::json& first = d.specs.front()->defaultValue;
  if (!first.is_boolean()) return std::nullopt;
  for (const auto* s : d.specs)
    if (s->defaultValue != first) return std::nullopt;
  return first.get<bool>();
}

std::string helpOf(const Declared& d) {
  const plugin::ParameterSpec& s = *d.specs.front();
  std::string help = s.help.empty() ? s.label : s.help;
  if (!s.unit.empty()) help += " (" + s.unit + ")";
  if (!s.defaultValue.is_null() && s.type != plugin::ParameterType::Boolean) help += "; default " + s.defaultValue.dump();
  std::string owners;
  for (const auto& o : d.owners) owners += (owners.empty() ? "" : ", ") + o;
  return help + "  [" + owners + "]";
}

std::string typeNameOf(const plugin::ParameterSpec& s) {
  switch (s.type) {
    case plugin::ParameterType::Choice: {
      std::string text;
      for (const auto& c : s.choices) text += (text.empty() ? "" : "|") + c;
      return text;
    }
    case plugin::ParameterType::IntegerList: return "INT[,INT...]";
    case plugin::ParameterType::NumberList: return "NUMBER[,NUMBER...]";
    case plugin::ParameterType::StringList: return "TEXT[,TEXT...]";
    default: return plugin::parameterTypeName(s.type);
  }
}

}  // namespace

std::string flagName(const std::string& parameter) {
  std::string flag = parameter;
  std::replace(flag.begin(), flag.end(), '_', '-');
  std::replace(flag.begin(), flag.end(), '.', '-');
  return flag;
}

void SchemaFlags::add(CLI::App& command, const std::vector<std::pair<std::string, const plugin::ParameterSchema*>>& schemas,
                      const std::string& group) {
  std::vector<std::string> order;
  std::map<std::string, Declared> declared;
  for (const auto& [owner, schema] : schemas)
    for (const auto& spec : schema->specs()) {
      if (!declared.count(spec.name)) order.push_back(spec.name);
      declared[spec.name].specs.push_back(&spec);
      declared[spec.name].owners.push_back(owner);
    }
  CLI::Option_group* options = command.add_option_group(group);
  std::vector<std::string> leftToSet;
  for (const auto& name : order) {
    const Declared& d = declared[name];
    auto flag = std::make_unique<Flag>();
    flag->parameter = name;
    const std::optional<bool> byDefault = allBoolean(d) ? agreedDefault(d) : std::nullopt;
    flag->isSwitch = byDefault.has_value();
    flag->negated = byDefault.value_or(false);
    const std::string option = "--" + std::string(flag->negated ? "no-" : "") + flagName(name);
    if (command.get_option_no_throw(option) != nullptr) {
      leftToSet.push_back(name);
      continue;
    }
    if (flag->isSwitch)
      flag->option = options->add_flag(option, flag->on, (flag->negated ? "Turn off: " : "") + helpOf(d));
    else
      flag->option = options->add_option(option, flag->text, helpOf(d))->type_name(typeNameOf(*d.specs.front()));
    flags_.push_back(std::move(flag));
  }
  if (!leftToSet.empty()) {
    std::string names;
    for (const auto& n : leftToSet) names += (names.empty() ? "" : ", ") + n;
    options->description(group + " (also --set NAME=VALUE; " + names + " only so)");
  }
}

std::vector<std::string> SchemaFlags::assignments() const {
  std::vector<std::string> out;
  for (const auto& flag : flags_) {
    if (flag->option->count() == 0) continue;
    if (flag->isSwitch) out.push_back(flag->parameter + "=" + (flag->negated ? "false" : "true"));
    else out.push_back(flag->parameter + "=" + flag->text);
  }
  return out;
}

std::vector<std::string> SchemaFlags::names() const {
  std::vector<std::string> out;
  for (const auto& flag : flags_) out.push_back(flag->parameter);
  return out;
}

}  // namespace medseg::cli
