// Shell quoting is only trusted once proven: every hostile string below goes through a real `sh -c`
// and must arrive as exactly one unchanged argument at a printing stub, with nothing executed.
#include <gtest/gtest.h>

#include <fstream>

#include "cluster/submit/Process.h"
#include "cluster/submit/ShellQuote.h"
#include "cluster/submit/StubPrograms.h"
#include "core/util/AtomicFile.h"
#include "support/TestSupport.h"

namespace medseg::cluster {
namespace {

using test_support::splitNul;
using test_support::writeScript;

const std::vector<std::string>& shellHostileStrings() {
  static const std::vector<std::string> strings{
      "run; rm -rf /", "$(touch pwned)", "`touch pwned`", "it's", "\"double\" quotes", "a\nnewline; touch pwned",
      "back\\slash", "$HOME ${PATH}", "*", "-n", "", "tab\there", "'", "''", "a'b'c", "&& touch pwned &", "| tee pwned",
      "> pwned", "!event", "~root", "#comment", "unicode äöü ✓"};
  return strings;
}

// A stub that prints each argument followed by a NUL byte, so any split or merge is visible.
std::filesystem::path writeArgvPrinter(const std::filesystem::path& folder) {
  return writeScript(folder / "print-argv", "for a in \"$@\"; do printf '%s\\0' \"$a\"; done\n");
}

TEST(ShellQuote, QuotesPlainAndEmbeddedQuotes) {
  EXPECT_EQ(shellQuote("abc"), "'abc'");
  EXPECT_EQ(shellQuote(""), "''");
  EXPECT_EQ(shellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(shellJoin({"a b", "c"}), "'a b' 'c'");
  EXPECT_THROW(shellQuote(std::string("a\0b", 3)), std::exception);
}

TEST(ShellQuote, HostileArgumentsSurviveShellUnchangedAndExecuteNothing) {
  test::ScratchDir scratch("shellquote");
  const auto stub = writeArgvPrinter(scratch.path());
  std::vector<std::string> argv{stub.string()};
  for (const auto& s : shellHostileStrings()) argv.push_back(s);
  // Run inside the scratch folder, so a successful injection would create ./pwned there.
  const std::string line = "cd " + shellQuote(scratch.path().string()) + " && " + shellJoin(argv);
  const ProcessResult result = runCapture({"sh", "-c", line}, 20.0);
  ASSERT_EQ(result.exitCode, 0) << result.output;
  EXPECT_EQ(splitNul(result.output), shellHostileStrings());
  EXPECT_FALSE(std::filesystem::exists(scratch / "pwned"));
}

TEST(ShellQuote, PlainTokens) {
  EXPECT_TRUE(isPlainToken("gpu-a100_1.x"));
  EXPECT_FALSE(isPlainToken("gpu;rm"));
  EXPECT_FALSE(isPlainToken(""));
  EXPECT_FALSE(isPlainToken("a b"));
  EXPECT_TRUE(isPlainToken("a,b", ","));
}

}  // namespace
}  // namespace medseg::cluster
