#pragma once
// MONAI's references and expressions (monai/bundle/reference_resolver.py, config_item.py), resolved
// without Python in a config already merged and with its macros and relative ids replaced
// (BundleConfigFiles.h):
//   "@id"         the item at id: a top-level key, then keys or list indices separated by "::" or "#"
//                 ("@preprocessing#transforms#0"); the whole string must be the reference, as MONAI's
//                 pattern (@ then word characters and separators) requires, else it is text
//   "$..."        an expression, evaluated where it is one of the forms of ConfigExpression.h (literals,
//                 references, arithmetic, comparisons, conditionals, len/int/float/..., dtypes); any
//                 other stays text, and the argument that needs its value refuses it by name
//                 (TransformArguments.h), one that does not (a device, an output folder) ignores it
// Components (objects with "_target_") whose "_disabled_" is true (or a string that is "true" once
// trimmed and lower-cased, MONAI's test) are dropped from lists and mappings, as MONAI drops them; a
// reference to one is None.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace medseg::torchscript {

// `value` with its references followed and its expressions evaluated; a reference to no item stays
// text. InputError naming `where` for references that go round in a circle or nest deeper than 32.
nlohmann::json resolveReferences(const nlohmann::json& value, const nlohmann::json& config, const std::string& where);

// A "$" string that resolveReferences left as text: an expression MedSeg does not evaluate.
bool isPythonExpression(const nlohmann::json& value);

// An "@..." string that resolveReferences left as text: a reference to no item.
bool isDanglingReference(const nlohmann::json& value);

// Why a "$" string was left as text (what ConfigExpression.h does not evaluate), for messages.
std::string whyNotEvaluated(const std::string& expression);

// "a#b::0" -> {"a", "b", "0"}: MONAI's id parts ("#" is the old spelling of "::").
std::vector<std::string> idParts(const std::string& id);

}  // namespace medseg::torchscript
