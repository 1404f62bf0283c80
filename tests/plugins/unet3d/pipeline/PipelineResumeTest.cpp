// Model-parallel training resumes (mpirun -np 2 medseg-worker --mode model --task train --resume):
// a run stopped part way — once mid-epoch, once at an epoch end — and resumed ends with bit-identical
// weights to an uninterrupted run. The stops come from a time budget spent before the first step
// (--set max_minutes=1e-6: stop after the next step), so where the run stops is deterministic. A run
// folder holding a checkpoint is refused without --resume; a resume with another stage count or split
// names both; --fresh starts over.
#include <gtest/gtest.h>

#include <sstream>

#include "cluster/parallel/MpiTestSupport.h"
#include "plugins/unet3d/pipeline/PipelineTestConfig.h"
#include "plugins/unet3d/nn/ModelCheckpoint.h"

namespace medseg::unet3d {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using cluster::test_support::runWorker;
using cluster::ProcessResult;

const std::vector<std::string> kStopAfterNextStep{"--set", "max_minutes=1e-6"};

// A tiny data set and 3 epochs x 2 steps of the pipeline test network.
struct ResumeScenario {
  ::medseg::test::ScratchDir scratch{"pipeline-resume"};
  fs::path data = scratch / "data";
  fs::path config = scratch / "train.json";

  ResumeScenario() {
    medseg::test::writeTinyDataset(data, 3, 20);
    json document = test::pipelineTestDocument();
    document["epochs"] = 3;
    document["steps_per_epoch"] = 2;
    writeFileAtomically(config, document.dump(2));
  }

  // A fixed split: the partitioner chooses from timings, and another split would sum the clipping
  // norm over stages in another order.
  ProcessResult train(const fs::path& runDir, const std::vector<std::string>& extra = {}, int ranks = 2,
                      const std::string& split = "encoder2") const {
    std::vector<std::string> args{"--run-dir", runDir.string(), "--mode",   "model",       "--task",  "train",
                                  "--config",  config.string(), "--data",   data.string(), "--split", split};
    args.insert(args.end(), extra.begin(), extra.end());
    return runWorker(ranks, args);
  }
};

int64_t committedStep(const fs::path& runDir) {
  return json::parse(readTextFile(runDir / "pipeline-checkpoint" / "state.json")).at("training").at("step").get<int64_t>();
}

std::vector<json> records(const fs::path& runDir) {
  std::vector<json> out;
  std::istringstream lines(readTextFile(runDir / "metrics.jsonl"));
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) out.push_back(json::parse(line));
  return out;
}

std::vector<std::string> checkpointFiles(const fs::path& runDir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(runDir / "pipeline-checkpoint")) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Largest |a - b| over all parameters and buffers; -1 when the two models differ in layout.
double largestWeightDifference(const fs::path& a, const fs::path& b) {
  UNet3d first = loadModelForInference(a), second = loadModelForInference(b);
  const auto left = first->named_parameters(), right = second->named_parameters();
  if (left.size() != right.size()) return -1.0;
  double largest = 0.0;
  for (const auto& item : left) {
    const auto* other = right.find(item.key());
    if (!other || other->sizes() != item.value().sizes()) return -1.0;
    largest = std::max(largest, (item.value() - *other).abs().max().item<double>());
  }
  return largest;
}

TEST(PipelineResume, InterruptedAndResumedRunEndsWithTheUninterruptedWeights) {
  ResumeScenario scenario;
  const fs::path whole = scenario.scratch / "whole", cut = scenario.scratch / "cut";
  const auto uninterrupted = scenario.train(whole);
  ASSERT_EQ(uninterrupted.exitCode, 0) << uninterrupted.output;

  const auto first = scenario.train(cut, kStopAfterNextStep);  // step 1: mid-epoch
  ASSERT_EQ(first.exitCode, 0) << first.output;
  EXPECT_TRUE(json::parse(readTextFile(cut / "metrics.json")).at("stopped_by_budget").get<bool>());
  ASSERT_EQ(committedStep(cut), 1);

  const auto refused = scenario.train(cut);
  EXPECT_EQ(refused.exitCode, 3) << refused.output;
  EXPECT_NE(refused.output.find("pass --resume to continue it, --fresh to start over"), std::string::npos) << refused.output;
  EXPECT_EQ(committedStep(cut), 1);  // the refused run changed nothing

  std::vector<std::string> resumeAndStop{"--resume"};
  resumeAndStop.insert(resumeAndStop.end(), kStopAfterNextStep.begin(), kStopAfterNextStep.end());
  const auto second = scenario.train(cut, resumeAndStop);  // step 2: the end of epoch 1
  ASSERT_EQ(second.exitCode, 0) << second.output;
  EXPECT_NE(second.output.find("resuming " + cut.string() + " at step 1 of 6"), std::string::npos) << second.output;
  ASSERT_EQ(committedStep(cut), 2);

  const auto last = scenario.train(cut, {"--resume"});
  ASSERT_EQ(last.exitCode, 0) << last.output;
  const json metrics = json::parse(readTextFile(cut / "metrics.json"));
  EXPECT_EQ(metrics.at("steps"), 6);
  EXPECT_EQ(metrics.at("resumed_from_step"), 2);
  EXPECT_EQ(committedStep(cut), 6);
  // The commit of step 6 removed the stage files of earlier steps.
  EXPECT_EQ(checkpointFiles(cut), (std::vector<std::string>{"stage-0-step-6.pt", "stage-1-step-6.pt", "state.json"}));

  EXPECT_EQ(largestWeightDifference(whole / "model.pt", cut / "model.pt"), 0.0) << "resumed weights differ";
  // The epochs both runs trained whole have the same losses, bit for bit.
  const auto wholeRecords = records(whole), cutRecords = records(cut);
  ASSERT_EQ(wholeRecords.size(), 3u);
  ASSERT_EQ(cutRecords.size(), 4u);  // epoch 1 in two parts (the first one partial), epochs 2 and 3
  EXPECT_TRUE(cutRecords[0].value("partial", false));
  for (size_t e = 1; e < 3; ++e) {
    EXPECT_EQ(cutRecords[e + 1].at("epoch"), wholeRecords[e].at("epoch"));
    EXPECT_EQ(cutRecords[e + 1].at("train_loss").get<double>(), wholeRecords[e].at("train_loss").get<double>()) << "epoch " << e + 1;
  }
}

TEST(PipelineResume, ResumeWithAnotherLayoutNamesBothAndFreshStartsOver) {
  ResumeScenario scenario;
  const fs::path cut = scenario.scratch / "cut";
  const auto first = scenario.train(cut, kStopAfterNextStep);
  ASSERT_EQ(first.exitCode, 0) << first.output;

  const auto oneRank = scenario.train(cut, {"--resume"}, 1);
  EXPECT_EQ(oneRank.exitCode, 3) << oneRank.output;
  EXPECT_NE(oneRank.output.find("has 2 pipeline stages (--split encoder2 --micro-batches 2 --schedule gpipe) but this job has 1"),
            std::string::npos)
      << oneRank.output;
  const auto otherSplit = scenario.train(cut, {"--resume"}, 2, "up1");
  EXPECT_EQ(otherSplit.exitCode, 3) << otherSplit.output;
  EXPECT_NE(otherSplit.output.find("trained with --split encoder2 --micro-batches 2 --schedule gpipe but this job asks for "
                                   "--split up1 --micro-batches 2 --schedule gpipe"),
            std::string::npos)
      << otherSplit.output;
  const auto missing = scenario.train(scenario.scratch / "none", {"--resume"});
  EXPECT_EQ(missing.exitCode, 3) << missing.output;
  EXPECT_NE(missing.output.find("does not exist (start the run without --resume)"), std::string::npos) << missing.output;

  std::vector<std::string> fresh{"--fresh"};
  fresh.insert(fresh.end(), kStopAfterNextStep.begin(), kStopAfterNextStep.end());
  const auto restarted = scenario.train(cut, fresh, 2, "up1");  // a new run: another split is fine
  ASSERT_EQ(restarted.exitCode, 0) << restarted.output;
  EXPECT_EQ(committedStep(cut), 1);
  EXPECT_EQ(records(cut).size(), 1u);  // the old run's journal went with it
  EXPECT_EQ(json::parse(readTextFile(cut / "pipeline-checkpoint" / "state.json")).at("plan").at("stages")[1][0], "up1");
}

}  // namespace
}  // namespace medseg::unet3d
