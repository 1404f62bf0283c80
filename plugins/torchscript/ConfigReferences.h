#pragma once
// MONAI's config syntax (monai/bundle/reference_resolver.py, config_item.py), read without Python:
//   "@id"         the item at id: a top-level key, then keys or list indices separated by "#" or "::"
//                 ("@preprocessing#transforms#0")
//   "$@id"        an expression that is only a reference: the item's value
//   "$literal"    a JSON or Python literal: "$[96, 96, 96]", "$(1.5, 1.5, 2.0)", "$True", "$None", "$0.5"
//   other "$..."  a Python expression: stays text ("$np.float32", "$@spacing * 2"); the argument that
//                 needs it refuses it by name (TransformArguments.h), one that does not ignores it
//   "%..."        a macro from another file: stays text, likewise
// Components (objects with "_target_") whose "_disabled_" is true or "true" are dropped, as MONAI skips
// them. A plain string "True" stays a string: MONAI does not read it as a boolean either.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace medseg::torchscript {

// `value` with its references followed and literal expressions evaluated; a reference to no item stays
// text. InputError naming `where` for references nesting deeper than 16.
nlohmann::json resolveReferences(const nlohmann::json& value, const nlohmann::json& config, const std::string& where);

// A "$" string that resolveReferences left as text: Python MedSeg does not evaluate.
bool isPythonExpression(const nlohmann::json& value);

// A Python literal (numbers, True / False / None, quoted strings, lists and tuples of them) as JSON;
// nullopt for anything else.
std::optional<nlohmann::json> pythonLiteral(const std::string& text);

}  // namespace medseg::torchscript
