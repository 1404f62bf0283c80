// results.jsonl lines with fields of the wrong type or out of range become warnings (the line is
// ignored), never a crash or a silently wrapped value; parse() reads text without touching the file.
#include <gtest/gtest.h>

#include "cluster/search/ResultsJournal.h"
#include "support/TestSupport.h"

namespace medseg::cluster {
namespace {

TEST(JournalParsing, BadFieldsAreWarningsAndGoodLinesSurvive) {
  test::ScratchDir dir("journal-parse");
  ResultsJournal journal(dir / "results.jsonl");
  const std::string good = R"({"event":"trial","trial":"t0","key":"k0","status":"finished","dice":0.8,"worker":1,"attempt":1,"epochs":3})";
  journal.parse(good + "\n" +
                R"({"trial":"t1","key":"k1","status":"finished","worker":1e300})" "\n" +
                R"({"trial":"t2","key":"k2","status":"finished","epochs":-1})" "\n" +
                R"({"trial":"t3","key":"k3","status":"failed","attempt":0})" "\n" +
                R"({"trial":4,"key":"k4","status":"finished"})" "\n" +
                R"({"event":"rung","trial":"t5","key":"k5","rung":2})" "\n" +
                R"({"event":"rung","trial":"t6","key":"k6","rung":2.5,"dice":0.1})" "\n" +
                R"({"event":7})" "\n" + "[1, 2]\n" + R"({"trial":"t8")");
  ASSERT_EQ(journal.records().size(), 1u);
  EXPECT_EQ(journal.records()[0].trial, "t0");
  EXPECT_TRUE(journal.rungs().empty());
  EXPECT_EQ(journal.warnings().size(), 9u);
  EXPECT_FALSE(std::filesystem::exists(dir / "results.jsonl"));  // parse() reads text only
  EXPECT_EQ(journal.completedKeys(), std::set<std::string>{"k0"});
}

}  // namespace
}  // namespace medseg::cluster
