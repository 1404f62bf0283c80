#pragma once
// The one recipe for reading a configuration document (training configs, search configs, cluster
// run configs): YAML or JSON into one JSON document, `key=value` overrides applied to it, bounded in
// depth and size because configs also arrive from other machines. What the document means is its
// reader's business (a training plugin's config, cluster/search's search section).
#include <cstddef>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace medseg {

// Configs are two or three levels deep. Refusing deep nesting up front keeps every recursive step
// after parsing (error messages dump values, yaml conversion, toJson) far from the stack's end.
constexpr size_t kMaxConfigDepth = 32;

// A YAML or JSON file as a JSON document (chosen by extension: .yaml/.yml, else JSON). InputError
// naming the file and line for syntax errors.
nlohmann::json readConfigDocument(const std::filesystem::path& file);
enum class ConfigSyntax { Json, Yaml };
// The same from text; `sourceName` names it in messages. An empty document is an empty mapping.
nlohmann::json parseConfigDocument(const std::string& text, ConfigSyntax syntax, const std::string& sourceName);
// Parses YAML text into JSON (plain scalars become numbers/booleans/null where they look like one).
nlohmann::json yamlToJson(const std::string& text, const std::string& sourceName);
// Applies `section.key=value` (value parsed as a YAML scalar or flow list: 3e-4, true, [64,64,64]).
void applyOverride(nlohmann::json& document, const std::string& assignment);

}  // namespace medseg
