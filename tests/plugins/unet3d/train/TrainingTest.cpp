#include <gtest/gtest.h>

#include <fstream>

#include "plugins/unet3d/nn/ModelCheckpoint.h"
#include "plugins/unet3d/train/Schedule.h"
#include "plugins/unet3d/train/Trainer.h"
#include "plugins/unet3d/train/TrainingPlan.h"
#include "plugins/unet3d/train/TrainingCheckpoint.h"
#include "plugins/unet3d/train/TrainingEngine.h"
#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"
#include "support/TestSupport.h"
#include "support/TinyTrainingCases.h"

namespace medseg {
namespace {

TEST(TrainingEngine, LossDecreasesOnATinyVolume) {
  torch::set_num_threads(1);
  auto config = test::tinyTrainConfig();
  config.epochs = 1;
  config.stepsPerEpoch = 40;
  config.augmentation.enabled = false;
  config.optimizer.lr = 0.01;
  config.schedule.name = "constant";
  config.network.baseFilters = 8;
  TrainingEngine engine(config, torch::kCPU);
  BatchFactory batches(test::tinyTrainingCases(3), config);
  std::vector<double> losses;
  for (int i = 0; i < 40; ++i) {
    const auto stats = engine.step(batches.make(engine.stepIndex()));
    EXPECT_GT(stats.voxelsPerSecond(), 0.0);
    losses.push_back(stats.loss);
  }
  double first = 0, last = 0;
  for (int i = 0; i < 5; ++i) first += losses[static_cast<size_t>(i)] / 5, last += losses[static_cast<size_t>(35 + i)] / 5;
  EXPECT_LT(last, 0.85 * first) << "first " << first << " last " << last;
}

TEST(TrainingEngine, DeepSupervisionAndLabelsModeTrain) {
  auto config = test::tinyTrainConfig();
  config.targets = TargetMode::Labels;
  config.network.outChannels = 4;
  config.network.depth = 3;
  config.network.deepSupervision = true;
  config.classNames = {"background", "edema", "non-enhancing", "enhancing"};
  config.optimizer.name = "sgd";
  config.optimizer.lr = 0.01;
  TrainingEngine engine(config, torch::kCPU);
  BatchFactory batches(test::tinyTrainingCases(2), config);
  const auto stats = engine.step(batches.make(0));
  EXPECT_TRUE(std::isfinite(stats.loss));
  EXPECT_GT(stats.gradNorm, 0.0);
}

TEST(Schedule, PolyCosineAndWarmup) {
  ScheduleConfig poly;
  EXPECT_DOUBLE_EQ(scheduledLearningRate(poly, 0.01, 0, 100), 0.01);
  EXPECT_NEAR(scheduledLearningRate(poly, 0.01, 50, 100), 0.01 * std::pow(0.5, 0.9), 1e-12);
  ScheduleConfig cosine;
  cosine.name = "cosine";
  EXPECT_NEAR(scheduledLearningRate(cosine, 1.0, 50, 100), 0.5, 1e-12);
  cosine.warmupSteps = 10;
  EXPECT_NEAR(scheduledLearningRate(cosine, 1.0, 4, 110), 0.5, 1e-12);
}

class TrainerRun : public ::testing::Test {
 protected:
  void SetUp() override {
    test::writeTinyDataset(scratch_ / "data", 6);
    clearInterrupt();
  }
  TrainConfig config() const {
    auto c = TrainConfig::fromJson({{"data", (scratch_ / "data").string()},
                                    {"seed", 5},
                                    {"threads", 1},
                                    {"patch_size", {16, 16, 16}},
                                    {"epochs", 2},
                                    {"steps_per_epoch", 3},
                                    {"network", {{"depth", 2}, {"base_filters", 4}}},
                                    {"optimizer", {{"name", "adam"}, {"lr", 0.003}}},
                                    {"validation", {{"cases", 2}, {"roi", {24, 24, 24}}}},
                                    {"loader", {{"workers", 2}, {"prefetch", 3}}}});
    return c;
  }
  static std::vector<torch::Tensor> weights(const std::filesystem::path& checkpoint) {
    std::vector<torch::Tensor> out;
    for (const auto& p : loadModelForInference(checkpoint)->parameters()) out.push_back(p.detach().clone());
    return out;
  }
  test::ScratchDir scratch_{"trainer"};
  Reporter reporter_{OutputMode::JsonLines};
};

TEST_F(TrainerRun, WritesRunFolderAndMetrics) {
  TrainerOptions options;
  options.runDir = scratch_ / "run";
  const auto result = Trainer(config(), options, reporter_).run();
  EXPECT_EQ(result.steps, 6);
  EXPECT_EQ(result.epochs, 2);
  for (const char* file : {"config.json", "checkpoint.pt", "best.pt", "metrics.jsonl"})
    EXPECT_TRUE(std::filesystem::exists(options.runDir / file)) << file;
  std::ifstream metrics(options.runDir / "metrics.jsonl");
  std::string line;
  int lines = 0;
  while (std::getline(metrics, line)) {
    const auto record = nlohmann::json::parse(line);
    EXPECT_EQ(record["epoch"], ++lines);
    EXPECT_TRUE(record["dice"].contains("WT"));
    EXPECT_TRUE(record.contains("mean_wt_dice"));
    EXPECT_TRUE(record.contains("data_wait_fraction"));
    EXPECT_TRUE(record.contains("lr"));
  }
  EXPECT_EQ(lines, 2);
  const auto description = readModelDescription(options.runDir / "best.pt");
  EXPECT_EQ(description.network.inChannels, 2);
  EXPECT_EQ(description.classNames, (std::vector<std::string>{"WT", "TC", "ET"}));
  EXPECT_EQ(description.regionLabels.size(), 3u);
  EXPECT_EQ(description.modalities, (std::vector<std::string>{"FLAIR", "T1gd"}));
  const auto resolved = nlohmann::json::parse(readTextFile(options.runDir / "config.json"));
  EXPECT_EQ(resolved["network"]["in_channels"], 2);
  EXPECT_TRUE(std::filesystem::exists(options.runDir / "model.pt"));  // the final model
  // The plan: the data set's fingerprint and what it decided, written once.
  const auto plan = nlohmann::json::parse(readTextFile(options.runDir / "training-plan.json"));
  EXPECT_EQ(plan["fingerprint"]["labelled_cases"], 6);
  EXPECT_EQ(plan["fingerprint"]["modalities"], nlohmann::json({"FLAIR", "T1gd"}));
  EXPECT_EQ(plan["fingerprint"]["preprocessed_shapes"].size(), 6u);
  EXPECT_EQ(plan["resolved"]["in_channels"], 2);
  EXPECT_EQ(plan["resolved"]["class_names"], nlohmann::json({"WT", "TC", "ET"}));
  EXPECT_EQ(plan["resolved"]["patch_size"], nlohmann::json({16, 16, 16}));
  // A second fresh run into the same folder is refused instead of overwriting it.
  EXPECT_THROW(Trainer(config(), options, reporter_).run(), InputError);
}

TEST_F(TrainerRun, PlanningResolvesFromTheDataSetAndLeavesTheRequestedConfigAlone) {
  TrainConfig requested = config();
  requested.patchSize.clear();  // the median preprocessed case decides
  const nlohmann::json before = requested.toJson();
  const PlannedTraining planned = planTraining(requested, reporter_);
  EXPECT_EQ(requested.toJson(), before);
  EXPECT_FALSE(requested.inChannelsSet);
  const TrainConfig& resolved = planned.plan.config;
  EXPECT_EQ(resolved.network.inChannels, 2);
  EXPECT_EQ(resolved.classNames, (std::vector<std::string>{"WT", "TC", "ET"}));
  ASSERT_EQ(resolved.patchSize.size(), 3u);
  const auto median = planned.plan.fingerprint.medianShape;
  for (size_t a = 0; a < 3; ++a) {
    EXPECT_GE(resolved.patchSize[a], std::min<int64_t>(median[a], 128)) << "axis " << a;  // one patch covers a median case
    EXPECT_EQ(resolved.patchSize[a] % resolved.network.sizeDivisor(), 0) << "axis " << a;
  }
  EXPECT_EQ(planned.data.train->size() + planned.data.validation.size(), 6u);
}

TEST_F(TrainerRun, ResumeIsBitIdenticalToAnUninterruptedRun) {
  TrainerOptions straight;
  straight.runDir = scratch_ / "straight";
  Trainer(config(), straight, reporter_).run();

  TrainerOptions interrupted;
  interrupted.runDir = scratch_ / "resumed";
  interrupted.onStep = [](const StepStats& stats) {
    if (stats.step == 3) requestInterrupt();  // mid-epoch: after the 4th step
  };
  EXPECT_THROW(Trainer(config(), interrupted, reporter_).run(), Interrupted);
  clearInterrupt();
  EXPECT_EQ(readTrainingState(interrupted.runDir / "checkpoint.pt").step, 4);
  TrainerOptions resume;
  resume.runDir = interrupted.runDir;
  resume.resume = ResumePolicy::Resume;
  const auto result = Trainer(configForResume(resume.runDir, {"loader.workers=1"}), resume, reporter_).run();
  EXPECT_EQ(result.steps, 6);

  const auto a = weights(straight.runDir / "checkpoint.pt"), b = weights(resume.runDir / "checkpoint.pt");
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << "parameter " << i;
  EXPECT_THROW(configForResume(resume.runDir, {"optimizer.lr=1"}), InputError);
}

TEST_F(TrainerRun, TimeBudgetStopsCleanlyAndValidates) {
  TrainerOptions options;
  options.runDir = scratch_ / "budget";
  auto c = config();
  c.maxMinutes = 1e-6;  // stops after the first step
  const auto result = Trainer(c, options, reporter_).run();
  EXPECT_TRUE(result.stoppedByBudget);
  EXPECT_EQ(result.steps, 1);
  EXPECT_TRUE(std::filesystem::exists(options.runDir / "best.pt"));
  // The partial epoch was validated (-1 means never), and that one validation is the best.
  EXPECT_NE(result.wholeTumourDice, -1.0);
  EXPECT_DOUBLE_EQ(result.bestWholeTumourDice, result.wholeTumourDice);
  EXPECT_TRUE(result.lastDice.contains("WT")) << result.lastDice.dump();
}

}  // namespace
}  // namespace medseg
