// `medseg train` end to end on a tiny data set: run folder, JSON events, resume, bad config.
#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "support/TinyData.h"
#include "core/util/AtomicFile.h"
#include "support/TestSupport.h"

namespace medseg {
namespace {

TEST(TrainCli, TinyRunWritesRunFolderAndJsonEvents) {
  test::ScratchDir dir("train-cli");
  test::writeTinyDataset(dir / "data", 5, 20);
  const std::string config = std::string(MEDSEG_SOURCE_DIR) + "/resources/configs/tiny-test.yaml";
  const auto run = test::runMedseg({"--json", "train", "--config", config, "--data", (dir / "data").string(), "--out",
                                    (dir / "run").string()});
  ASSERT_EQ(run.exitCode, 0) << run.output;
  bool sawMetric = false, sawResult = false;
  std::istringstream lines(run.output);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line.front() != '{') continue;
    const auto event = nlohmann::json::parse(line);
    if (event["event"] == "metric") sawMetric = event.contains("dice") && event["dice"].contains("WT");
    if (event["event"] == "result") {
      sawResult = true;
      EXPECT_EQ(event["kind"], "train");
      EXPECT_TRUE(std::filesystem::exists(event["best_checkpoint"].get<std::string>()));
      EXPECT_EQ(event["steps"], 6);
    }
  }
  EXPECT_TRUE(sawMetric) << run.output;
  EXPECT_TRUE(sawResult) << run.output;
  for (const char* file : {"config.json", "checkpoint.pt", "best.pt", "metrics.jsonl"})
    EXPECT_TRUE(std::filesystem::exists(dir / "run" / file)) << file;
  // Resuming a finished run is a no-op that succeeds; a fresh run into the same folder is refused.
  EXPECT_EQ(test::runMedseg({"train", "--resume", "--out", (dir / "run").string()}).exitCode, 0);
  EXPECT_EQ(test::runMedseg({"train", "--config", config, "--data", (dir / "data").string(), "--out",
                             (dir / "run").string()}).exitCode, 3);
}

TEST(TrainCli, UnknownConfigKeyIsBadInput) {
  test::ScratchDir dir("train-cli-bad");
  writeFileAtomically(dir / "bad.yaml", "optimizer:\n  lrate: 0.1\n");
  const auto run = test::runMedseg({"train", "--config", (dir / "bad.yaml").string(), "--out", (dir / "run").string()});
  EXPECT_EQ(run.exitCode, 3);
  EXPECT_NE(run.output.find("optimizer.lrate"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace medseg
