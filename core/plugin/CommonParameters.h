#pragma once
// Parameters that several plugins take with one meaning (the sliding-window settings of every LibTorch
// segmenter), declared once here so that the plugins' forms, flags and help cannot drift apart. A
// manifest's parameter list names one by {"common": "overlap"}; any other key in that entry
// overrides the common declaration's ("default": null where the plugin decides), except "name".
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace medseg::plugin {

// The names a manifest may give to "common".
std::vector<std::string> commonParameterNames();

// The declaration of common parameter `name`; PluginError listing the names for an unknown one.
const nlohmann::json& commonParameter(const std::string& name);

// A manifest's parameter entry as declared: an entry with "common" becomes the common declaration
// with the entry's other keys laid over it; any other entry is returned as it is.
nlohmann::json expandCommonParameter(const nlohmann::json& entry);

}  // namespace medseg::plugin
