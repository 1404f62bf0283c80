#pragma once
// The "$" expressions of MONAI's config language (monai/bundle/config_item.py ConfigExpression: Python's
// eval, with each "@id" standing for that item's value), evaluated without Python for the forms the
// model zoo's inference configs use:
//   literals       numbers, 'strings', True / False / None, [lists], (tuples)
//   references     @id, @a::b::0 or @a#b#0 (the item's value, as MONAI substitutes it)
//   arithmetic     + - * / // % ** on numbers (True and False count as 1 and 0), + and * on strings and lists
//   comparisons    == != < <= > >= in, not in, is None, is not None; and, or, not (Python's truthiness)
//   conditionals   a if cond else b (only the branch chosen is evaluated, as in Python)
//   subscripts     x[i], x[i:j], x['key']
//   calls          len, int, float, bool, abs, min, max, round (one argument), list, tuple
//   dtypes         torch.float32, np.float32, numpy.float32, ... (kept as the text "$torch.float32", which
//                  the argument taking a dtype reads)
// Anything else (a lambda, a call such as torch.device(...) or @network_def.to(@device), a comprehension,
// an import, a name other than a dtype's) is not evaluated: the answer says what was met, and the
// expression stays text for the argument that needs its value to refuse by name (TransformArguments.h).
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace medseg::torchscript {

// The value of the config item `id` ("a::b::0"), its own references and expressions resolved; nullopt
// when the config has no such item (MONAI fails on such a reference too).
using ItemLookup = std::function<std::optional<nlohmann::json>(const std::string& id)>;

struct Evaluated {
  std::optional<nlohmann::json> value;  // nullopt: not evaluated
  std::string why;                      // then: what MedSeg does not evaluate ("the call torch.device(...)")
};

// `expression` without its leading "$".
Evaluated evaluateExpression(const std::string& expression, const ItemLookup& lookup);

// Why `expression` (without "$") is beyond the forms above, from its text alone; "" when it is within them
// (then only what its references hold can stop it).
std::string expressionProblem(const std::string& expression);

}  // namespace medseg::torchscript
