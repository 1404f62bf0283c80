#include "cluster/submit/ShellQuote.h"

#include "core/util/Interrupt.h"

namespace medseg::cluster {

std::string shellQuote(const std::string& argument) {
  if (argument.find('\0') != std::string::npos)
    throw InputError("an argument contains a NUL byte, which no command line can carry: " + argument.substr(0, argument.find('\0')));
  std::string quoted = "'";
  for (char c : argument) {
    if (c == '\'')
      quoted += "'\\''";
    else
      quoted += c;
  }
  quoted += "'";
  return quoted;
}

std::string shellJoin(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& argument : argv) {
    if (!line.empty()) line += ' ';
    line += shellQuote(argument);
  }
  return line;
}

bool isPlainToken(const std::string& token, const std::string& extra) {
  if (token.empty()) return false;
  for (unsigned char c : token) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                       c == '_' || c == '-' || extra.find(static_cast<char>(c)) != std::string::npos;
    if (!plain) return false;
  }
  return true;
}

}  // namespace medseg::cluster
