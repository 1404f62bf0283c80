#pragma once
// A bundle's config as `monai.bundle` builds it from its files (monai/bundle/config_parser.py,
// monai/bundle/utils.py merge_kv), before any reference is followed (ConfigReferences.h):
//   files          JSON, or YAML read as PyYAML reads it (PyYaml.h); each a mapping
//   several files  merged in order, as `python -m monai.bundle run --config_file "['a.json', 'b.yaml']"`
//                  merges them: each top-level key of a later file sets the item it names, where a key
//                  may be an id ("evaluator#amp": the entry amp of evaluator, which must exist), and a
//                  key "+name" adds a mapping's entries to the item name or appends a list to it
//   relative ids   "@#key" (a sibling of the string's item), "@##key" (one level up), "%#key": made
//                  absolute from where the string sits
//   macros         "%id" (a copy of the item id of this config), "%path.json#id" / "%path.yaml::id" (of
//                  another config file; a relative path is taken from the bundle folder, where
//                  `monai.bundle run` is started); "%path.json" alone copies the whole file
//   "#"            becomes "::" in every string, as MONAI normalises them
// A macro's copy has its own macros replaced too (MONAI replaces them only when its walk reaches the
// copied item first). Every refusal is an InputError naming the file, the key, the value and what to change.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace medseg::torchscript {

// One config file, JSON or YAML by its extension (MONAI's rule: .json, .yaml, .yml, any case).
nlohmann::json loadConfigFile(const std::filesystem::path& file);

// `files` merged in order, with relative ids and macros replaced; `bundleRoot` anchors relative macro paths.
nlohmann::json mergedBundleConfig(const std::vector<std::filesystem::path>& files, const std::filesystem::path& bundleRoot);

// Relative ids and macros replaced in a config read already (`source` names it in messages); an empty
// `bundleRoot` refuses macros that name files.
nlohmann::json preparedConfig(nlohmann::json config, const std::filesystem::path& bundleRoot, const std::string& source);

}  // namespace medseg::torchscript
