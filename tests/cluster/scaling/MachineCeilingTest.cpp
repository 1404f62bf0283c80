// The machine's ceiling for several copies of a piece of work at once, with stand-in work whose time
// is known: a shell that reports a fixed "seconds" is the ceiling's arithmetic; one that fails names
// its folder.
#include <gtest/gtest.h>

#include <fstream>

#include "cluster/scaling/MachineCeiling.h"
#include "core/util/AtomicFile.h"
#include "support/TestSupport.h"

namespace medseg::cluster {
namespace {

namespace fs = std::filesystem;

// Each copy writes {"event":"result","seconds":S} with S from the copy's folder name: alone 2 before
// and 2.6 after the copies (the lower median, 2, counts), 2.5 at once.
CeilingWork standIn(bool fail = false) {
  CeilingWork work;
  work.description = "stand-in";
  work.command = [fail](const fs::path& folder) {
    const std::string seconds = folder.filename() == "alone-1" ? "2" : folder.filename() == "alone-2" ? "2.6" : "2.5";
    return std::vector<std::string>{"/bin/sh", "-c",
                                    fail ? "echo broken >&2; exit 3" : "echo '{\"event\":\"result\",\"seconds\":" + seconds + "}'"};
  };
  work.seconds = [](const fs::path& folder) {
    const auto text = readTextFile(folder / "stdout.jsonl");
    return nlohmann::json::parse(text).at("seconds").get<double>();
  };
  return work;
}

TEST(MachineCeiling, AloneOverAtOnceIsTheEfficiencyEachCopyKeeps) {
  test::ScratchDir scratch("machine-ceiling");
  const MachineCeiling ceiling = measureMachineCeiling(standIn(), 2, scratch / "ceiling");
  EXPECT_EQ(ceiling.aloneRuns, (std::vector<double>{2.0, 2.6}));
  EXPECT_DOUBLE_EQ(ceiling.aloneSeconds, 2.0);
  ASSERT_EQ(ceiling.atOnceSeconds.size(), 2u);
  EXPECT_DOUBLE_EQ(ceiling.efficiency(), 0.8);
  EXPECT_DOUBLE_EQ(ceiling.slowdown(), 1.25);
  // What the runs allow: the fastest alone run (2) against the round at once (2.5), up to the slowest (2.6).
  EXPECT_DOUBLE_EQ(ceiling.efficiencyRange().first, 0.8);
  EXPECT_DOUBLE_EQ(ceiling.efficiencyRange().second, 1.04);
  EXPECT_EQ(ceiling.toJson()["efficiency_range"], nlohmann::json({0.8, 1.04}));
  EXPECT_TRUE(fs::exists(scratch / "ceiling" / "at-once-1" / "copy-1" / "stdout.jsonl"));
  EXPECT_EQ(measureMachineCeiling(standIn(), 3, scratch / "rounds", 2).aloneRuns.size(), 3u) << "alone before, between, after";
  EXPECT_EQ(ceiling.toJson()["work"], "stand-in");
  EXPECT_THROW(measureMachineCeiling(standIn(), 2, scratch / "ceiling"), std::exception) << "fresh folders only";
  EXPECT_THROW(measureMachineCeiling(standIn(), 1, scratch / "one"), std::exception);
}

TEST(MachineCeiling, AFailingCopyIsAnErrorNamingItsFolder) {
  test::ScratchDir scratch("machine-ceiling-fail");
  try {
    measureMachineCeiling(standIn(true), 2, scratch / "ceiling");
    FAIL() << "a failed copy measured nothing";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("alone-1"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("exit 3"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace medseg::cluster
