#pragma once
// Small text helpers that several sources need alike: messages listing names, lines read from
// other programs' output.
#include <iomanip>
#include <sstream>
#include <string>
#include <vector>

namespace medseg {

// "a, b, c" ("" for none).
inline std::string joinedWithCommas(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// `text` without the leading and trailing characters of `blanks` (by default spaces, tabs and line
// ends; a parser that must see a stray line end passes " \t").
inline std::string trimmed(const std::string& text, const char* blanks = " \t\r\n") {
  const auto begin = text.find_first_not_of(blanks);
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(blanks) - begin + 1);
}

// `value` with `decimals` digits after the point: fixedDecimals(0.97312, 3) is "0.973".
inline std::string fixedDecimals(double value, int decimals) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(decimals) << value;
  return text.str();
}

}  // namespace medseg
