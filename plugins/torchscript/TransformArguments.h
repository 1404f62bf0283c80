#pragma once
// Every argument of every MONAI component MedSeg runs from a bundle (the allow-listed transforms, the
// inferers, Compose), and what MedSeg does with it (TransformArguments.cpp holds the table):
//   read      MedSeg does what MONAI 1.4 does with it
//   inert     it changes bookkeeping only (metadata keys, devices, progress bars, where a file is
//             written), never the mask: accepted and not used
//   default   only MONAI's default runs; another value is refused
// Any other argument is refused by name, so an edited bundle never gives the unedited bundle's mask
// in silence. Values are checked when the bundle is read (before the model loads): their JSON type,
// the values MedSeg runs, and "$" Python expressions where a value is needed. A string where MONAI
// takes a boolean is read as MONAI's transforms test it ("True", "yes": true; "": false); one MONAI
// would take as true against its spelling ("False") is refused. Every refusal is an
// InputError naming the file, the section and index, the component, the argument and its value.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace medseg::torchscript {

// One component of a bundle's config, its references resolved (ConfigReferences.h), its arguments
// checked against the table. Getters give MONAI's default for an argument not given, and for an
// argument given per key (a list as long as "keys") the entry of the key MedSeg runs it on.
class BundleTransform {
 public:
  BundleTransform() = default;
  // InputError for an unknown component, an unknown argument or a value MedSeg does not run.
  // `where` names the file and the place ("inference.json: preprocessing[3]"); `key` is the data key
  // MedSeg runs it on (the input image's or the output's).
  BundleTransform(const nlohmann::json& component, const std::string& where, const std::string& key);

  const std::string& name() const { return name_; }  // without "monai.transforms." / "monai.inferers."
  const std::string& where() const { return where_; }
  // Its id in the config ("postprocessing#transforms#2"), for messages that say what to override.
  const std::string& id() const { return id_; }
  void setId(std::string id) { id_ = std::move(id); }
  const nlohmann::json& arguments() const { return args_; }
  bool appliesTo(const std::string& key) const;  // "keys" names it (or there are no keys)

  bool given(const char* name) const;  // present and not null
  bool flag(const char* name) const;
  double number(const char* name) const;
  std::optional<double> optionalNumber(const char* name) const;
  std::string text(const char* name) const;
  std::vector<double> numbers(const char* name) const;  // a number is a list of one
  // The dtype an argument names, canonical ("float32", "float64", ...), nullopt for null.
  std::optional<std::string> dtype(const char* name) const;
  const nlohmann::json& value(const char* name) const;  // as given (per key), or the default

  // InputError "<where> <Name>: <argument> = <value>: <why>".
  [[noreturn]] void refuse(const char* argument, const std::string& why) const;

 private:
  std::string name_, where_, id_;
  nlohmann::json args_;
  size_t keyIndex_ = 0;
};

// The component's name without MONAI's module prefixes; InputError when there is no "_target_".
std::string componentName(const nlohmann::json& component, const std::string& where);

// True when MedSeg knows the component (it has a row in the table).
bool knownComponent(const std::string& name);

// "float32" for "float32", "$np.float32", "$torch.float32", "$torch.float", ...; nullopt when unknown.
std::optional<std::string> dtypeName(const nlohmann::json& value);

}  // namespace medseg::torchscript
