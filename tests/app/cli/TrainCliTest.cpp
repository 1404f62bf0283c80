// `medseg train` end to end on a tiny data set: run folder, JSON events, resume, bad config.
#include <gtest/gtest.h>

#include <cstdio>
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

// `medseg --json train --serve` (an experiment search's trial worker): {"resume": "if_saved"} trains a
// trial from its config, and the same request again continues the checkpoint the plugin finds there
// (what a search does when a trial's worker died); a resume value that means nothing is refused.
TEST(TrainCli, ServedTrialsContinueWhatThePluginFindsWhenAskedIfSaved) {
  test::ScratchDir dir("train-cli-serve");
  test::writeTinyDataset(dir / "data", 5, 20);
  const std::string config = std::string(MEDSEG_SOURCE_DIR) + "/resources/configs/tiny-test.yaml";
  const nlohmann::json trial = {{"out", (dir / "trial").string()}, {"config", config}, {"resume", "if_saved"}};
  nlohmann::json odd = trial;
  odd["resume"] = "maybe";
  writeFileAtomically(dir / "requests.jsonl", trial.dump() + "\n" + trial.dump() + "\n" + odd.dump() + "\n");
  const std::string command = std::string("'") + MEDSEG_BINARY + "' --json train --serve --data '" + (dir / "data").string() +
                              "' < '" + (dir / "requests.jsonl").string() + "' 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  ASSERT_EQ(::pclose(pipe), 0) << output;
  std::vector<int64_t> resumedFrom, exitCodes;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line.front() != '{') continue;
    const auto event = nlohmann::json::parse(line);
    if (event["event"] == "result") resumedFrom.push_back(event.value("resumed_from_step", int64_t{-1}));
    if (event["event"] == "trial-end") exitCodes.push_back(event["exit_code"].get<int64_t>());
  }
  ASSERT_EQ(exitCodes, (std::vector<int64_t>{0, 0, 3})) << output;
  ASSERT_EQ(resumedFrom.size(), 2u) << output;
  EXPECT_EQ(resumedFrom[0], 0);  // nothing saved: trained from the config
  EXPECT_EQ(resumedFrom[1], 6);  // the finished trial's checkpoint continued (nothing left to train)
  EXPECT_NE(output.find("is true, false or \\\"if_saved\\\", found \\\"maybe\\\""), std::string::npos) << output;
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
