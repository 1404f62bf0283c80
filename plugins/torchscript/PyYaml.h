#pragma once
// YAML as MONAI reads a bundle's configs: PyYAML's safe loader (YAML 1.1), whose plain scalars differ
// from the YAML 1.2 that MedSeg's own configs follow (core/util/ConfigDocument.h):
//   booleans   yes / no / on / off / true / false in lower, Capitalised or UPPER case
//   integers   0b101, 0x1F, 017 (octal), 1_000, 1:30 (base 60)
//   floats     need a "." (1.0e-3 is a float, 1e-3 a string), .inf, .nan, 1:30.5
//   null       ~, null, Null, NULL, empty
//   merges     "<<: *anchor" (the mapping's own keys win)
// Quoted scalars and "!!str" are strings; dates stay text (PyYAML would make a date, which no
// transform argument takes).
#include <string>

#include <nlohmann/json.hpp>

namespace medseg::torchscript {

// InputError naming `source` and the line for a syntax error or a tag MONAI's loader refuses.
nlohmann::json pyYamlToJson(const std::string& text, const std::string& source);

// A plain (unquoted) YAML scalar as PyYAML resolves it.
nlohmann::json pyYamlScalar(const std::string& text);

}  // namespace medseg::torchscript
