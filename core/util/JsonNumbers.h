#pragma once
// Whole numbers from untrusted JSON (configs, checkpoints, journals). nlohmann's get<int64_t>() on a
// floating-point value is a plain static_cast: undefined behaviour outside the target's range (1e300,
// or inf and nan, which YAML can spell) and a silent truncation of 2.5 to 2. wholeNumber() accepts a
// JSON integer, or a float holding an exact whole number, inside [lowest, highest]; nothing else.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include <nlohmann/json.hpp>

namespace medseg {

inline std::optional<int64_t> wholeNumber(const nlohmann::json& value,
                                          int64_t lowest = std::numeric_limits<int64_t>::min(),
                                          int64_t highest = std::numeric_limits<int64_t>::max()) {
  int64_t result = 0;
  if (value.is_number_unsigned()) {
    const uint64_t unsignedValue = value.get<uint64_t>();
    if (unsignedValue > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    result = static_cast<int64_t>(unsignedValue);
  } else if (value.is_number_integer()) {
    result = value.get<int64_t>();
  } else if (value.is_number_float()) {
    const double real = value.get<double>();
    // -2^63 and 2^63 are exact doubles; the comparisons also reject nan.
    if (!(real >= -9223372036854775808.0 && real < 9223372036854775808.0) || real != std::floor(real))
      return std::nullopt;
    result = static_cast<int64_t>(real);
  } else {
    return std::nullopt;
  }
  if (result < lowest || result > highest) return std::nullopt;
  return result;
}

}  // namespace medseg
