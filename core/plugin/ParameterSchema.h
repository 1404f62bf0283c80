#pragma once
// A plugin's parameters declared as data (as Slicer's CLI-module XML does), so that every host
// builds its input from them: the studio a form (integer with a range -> spin box, choice -> combo
// box, boolean -> check box, file -> picker), the command line `--set name=value`, a cluster config
// its "parameters" object. In a manifest:
//   {"name": "overlap", "type": "number", "default": 0.5, "minimum": 0, "maximum": 0.95,
//    "label": "Window overlap", "unit": "", "help": "Fraction of a window shared with its neighbour"}
// Types: integer, number, boolean, choice ("choices": [...]), string, file ("filter": "Models (*.pt)"),
// folder, integer-list, number-list ("lengths": [1, 3]: how many values may be given), string-list. A default of
// null (or none) means "unset": the plugin decides (a window size from the model, say). An entry
// {"common": "overlap", ...} takes a parameter declared once for several plugins (CommonParameters.h).
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace medseg::plugin {

enum class ParameterType { Integer, Number, Boolean, Choice, String, File, Folder, IntegerList, NumberList, StringList };

const char* parameterTypeName(ParameterType type);
ParameterType parseParameterType(const std::string& name);  // PluginError naming the types

struct ParameterSpec {
  std::string name;   // the key: [a-z][a-z0-9_.]* ("optimizer.lr" for a nested training setting)
  ParameterType type = ParameterType::String;
  std::string label;  // for forms; the name when not given
  std::string help;
  std::string unit;   // "mm", "voxels", "s"
  nlohmann::json defaultValue;  // null: unset
  std::optional<double> minimum, maximum;  // integer, number, integer-list elements
  std::vector<std::string> choices;        // choice
  std::vector<int> lengths;                // list types: the counts allowed; empty: any
  std::string filter;                      // file: a file-dialog filter
  bool advanced = false;                   // forms may fold it away

  nlohmann::json toJson() const;
  static ParameterSpec fromJson(const nlohmann::json& json);  // PluginError naming the field
  // The value as this parameter takes it (a JSON value of its type), from command-line text.
  nlohmann::json parseText(const std::string& text) const;
  // PluginError when `value` is not of this type or outside its range / choices / lengths.
  void check(const nlohmann::json& value) const;
};

class ParameterSchema {
 public:
  ParameterSchema() = default;
  explicit ParameterSchema(std::vector<ParameterSpec> specs);
  static ParameterSchema fromJson(const nlohmann::json& list);  // PluginError for a bad entry or a repeated name
  nlohmann::json toJson() const;

  const std::vector<ParameterSpec>& specs() const { return specs_; }
  const ParameterSpec* find(const std::string& name) const;
  bool empty() const { return specs_.empty(); }

  // "name=value" -> {name, value parsed by its type}; PluginError for an unknown name (the message
  // lists the known ones, `owner` says whose they are: "plugin unet3d's infer parameters").
  std::pair<std::string, nlohmann::json> parseAssignment(const std::string& assignment, const std::string& owner) const;
  // {name: value} of every "name=value" (a later one for a name wins), as parseAssignment reads each.
  nlohmann::json parseAssignments(const std::vector<std::string>& assignments, const std::string& owner) const;
  // Every parameter with its value: `given` where set, else the default. PluginError for an unknown
  // name or a value that does not check.
  nlohmann::json resolve(const nlohmann::json& given, const std::string& owner) const;

 private:
  std::vector<ParameterSpec> specs_;
};

}  // namespace medseg::plugin
