#pragma once
// Quoting for the two places a command line passes through a shell we do not control: the remote
// shell behind `ssh host -- ...` (ssh joins its arguments with spaces into one command string) and the
// body of a generated sbatch script. Every argument is wrapped in single quotes, inside which a POSIX
// shell interprets nothing; an embedded single quote becomes '\'' (close, escaped quote, reopen).
#include <string>
#include <vector>

namespace medseg::cluster {

// One argument as a POSIX-shell word that evaluates to exactly `argument`. Throws InputError for a
// NUL byte (no shell or argv can carry it).
std::string shellQuote(const std::string& argument);
// argv as one command line: each argument quoted, separated by single spaces.
std::string shellJoin(const std::vector<std::string>& argv);

// True when `token` is non-empty and only [A-Za-z0-9._-] (optionally extra characters `extra`): safe
// to place verbatim where quoting is impossible (#SBATCH directives, host names).
bool isPlainToken(const std::string& token, const std::string& extra = "");

}  // namespace medseg::cluster
