// The pipeline over MPI ranks (mpirun -np 2 --oversubscribe medseg-worker --mode model): one step's
// logits, loss, every gradient and the updated weights equal the single-process TrainingEngine's
// (in float64, to 1e-12), with and without activation checkpointing; training and whole-volume inference through the
// pipeline; the benchmark's memory report and the budget error; `medseg bench --pipeline`.
#include <gtest/gtest.h>

#include <algorithm>
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

// The test network with explicit channels, so tasks on random tensors need no data set.
fs::path writeConfig(const fs::path& file, const std::string& dtype = "float32") {
  json document = test::pipelineTestDocument();
  document["network"]["in_channels"] = 2;
  document["network"]["out_channels"] = 3;
  document["dtype"] = dtype;
  writeFileAtomically(file, document.dump(2));
  return file;
}

void expectEqualToSingleProcess(const json& verify, const std::string& what) {
  EXPECT_EQ(verify["ranks"], 2) << what;
  EXPECT_EQ(verify["parameters_missing"], 0) << what;
  EXPECT_GT(verify["parameters_compared"].get<int>(), 20) << what;  // depth 3: every conv, norm and head
  const test::StepBounds& bound = test::kFloat64StepBounds;
  EXPECT_EQ(verify["dtype"], "float64") << what;
  EXPECT_LT(verify["max_logit_difference"].get<double>(), bound.logits) << what;
  EXPECT_LT(verify["loss_difference"].get<double>(), bound.loss) << what;
  EXPECT_GT(verify["max_gradient"].get<double>(), 0.0) << what;
  EXPECT_LT(verify["max_gradient_difference"].get<double>(),
            bound.gradientAbsolute + bound.gradientRelative * verify["max_gradient"].get<double>())
      << what;
  EXPECT_LT(verify["max_weight_difference"].get<double>(), bound.weights) << what;
  EXPECT_GT(verify["bytes_sent_rank0"].get<double>(), 0.0) << what;  // activations really crossed ranks
  EXPECT_EQ(verify["plan"]["stages"].size(), 2u) << what;
}

TEST(PipelineMpi, TwoRanksEqualSingleProcessForwardAndBackward) {
  ::medseg::test::ScratchDir scratch("pipeline-verify");
  const fs::path config = writeConfig(scratch / "config.json", "float64");
  // Partitioner's split, GPipe, 2 micro-batches.
  const auto plain = runWorker(2, {"--run-dir", (scratch / "plain").string(), "--mode", "model", "--task", "verify", "--config",
                                   config.string(), "--micro-batches", "2"});
  ASSERT_EQ(plain.exitCode, 0) << plain.output;
  expectEqualToSingleProcess(json::parse(readTextFile(scratch / "plain" / "verify.json")), "gpipe");
  // A split with two skips crossing the boundary, 1F1B, activation checkpointing.
  const auto checkpointed = runWorker(2, {"--run-dir", (scratch / "checkpointed").string(), "--mode", "model", "--task", "verify",
                                          "--config", config.string(), "--micro-batches", "2", "--recompute", "--schedule", "1f1b",
                                          "--split", "encoder2"});
  ASSERT_EQ(checkpointed.exitCode, 0) << checkpointed.output;
  const json verify = json::parse(readTextFile(scratch / "checkpointed" / "verify.json"));
  expectEqualToSingleProcess(verify, "1f1b checkpointed");
  EXPECT_EQ(verify["plan"]["stages"][1][0], "encoder2");
  EXPECT_TRUE(verify["plan"]["checkpoint"].get<bool>());
}

TEST(PipelineMpi, TrainsAndSegmentsWholeVolumesThroughThePipeline) {
  ::medseg::test::ScratchDir scratch("pipeline-train");
  medseg::test::writeTinyDataset(scratch / "data", 3, 20);
  json document = test::pipelineTestDocument();
  document["steps_per_epoch"] = 3;
  writeFileAtomically(scratch / "train.json", document.dump(2));
  const fs::path run = scratch / "run";
  const auto trained = runWorker(2, {"--run-dir", run.string(), "--mode", "model", "--task", "train", "--config",
                                     (scratch / "train.json").string(), "--data", (scratch / "data").string()});
  ASSERT_EQ(trained.exitCode, 0) << trained.output;
  const json metrics = json::parse(readTextFile(run / "metrics.json"));
  EXPECT_EQ(metrics["steps"], 3);
  EXPECT_EQ(metrics["stages"], 2);
  // Validated through the pipeline: the best Dice is the best of the epochs' validation records.
  double bestRecorded = -1.0;
  std::istringstream journal(readTextFile(run / "metrics.jsonl"));
  for (std::string line; std::getline(journal, line);)
    if (const json record = json::parse(line); record.contains("dice"))
      bestRecorded = std::max(bestRecorded, record["dice"].at("WT").get<double>());
  ASSERT_NE(bestRecorded, -1.0) << "no epoch was validated";
  EXPECT_DOUBLE_EQ(metrics["best_wt_dice"].get<double>(), bestRecorded);
  EXPECT_EQ(metrics["peak_rss_mb_per_rank"].size(), 2u);
  ASSERT_TRUE(fs::exists(run / "best.pt"));
  ModelDescription description;
  UNet3d model = loadModelForInference(run / "model.pt", &description);  // gathered from both stages
  EXPECT_EQ(model->parameterCount(), metrics["parameters"].get<int64_t>());
  EXPECT_EQ(description.network.depth, 3);

  const auto inferred = runWorker(2, {"--run-dir", (scratch / "infer").string(), "--mode", "model", "--task", "infer", "--config",
                                      (scratch / "train.json").string(), "--model", (run / "model.pt").string(), "--data",
                                      (scratch / "data").string(), "--cases", "2", "--infer-size", "40,36,30"});
  ASSERT_EQ(inferred.exitCode, 0) << inferred.output;
  const json infer = json::parse(readTextFile(scratch / "infer" / "infer.json"));
  ASSERT_EQ(infer["cases"].size(), 2u);
  const auto single = runWorker(1, {"--run-dir", (scratch / "infer-1").string(), "--mode", "model", "--task", "infer", "--config",
                                    (scratch / "train.json").string(), "--model", (run / "model.pt").string(), "--data",
                                    (scratch / "data").string(), "--cases", "2", "--infer-size", "40,36,30"});
  ASSERT_EQ(single.exitCode, 0) << single.output;
  const json oneStage = json::parse(readTextFile(scratch / "infer-1" / "infer.json"))["cases"];
  ASSERT_EQ(oneStage.size(), 2u);
  size_t caseIndex = 0;
  for (const auto& c : infer["cases"]) {
    EXPECT_EQ(c["whole_volume"]["windows"], 1);
    EXPECT_GE(c["sliding_window"]["windows"].get<int>(), 1);
    // Split over two stages, the passes score as the same model in one process does (float32 in
    // both: a boundary voxel may tip, hence 1e-3).
    const json& alone = oneStage.at(caseIndex++);
    ASSERT_EQ(alone["case"], c["case"]);
    for (const char* mode : {"whole_volume", "sliding_window"})
      EXPECT_NEAR(c[mode]["dice"]["WT"].get<double>(), alone[mode]["dice"]["WT"].get<double>(), 1e-3) << mode;
  }
  EXPECT_EQ(infer["volume"]["padded"], json({32, 36, 40}));  // z 30 -> 32: a multiple of 4 (depth 3)
  EXPECT_EQ(infer["volume"]["output"], json({3, 30, 36, 40}));  // cropped back, 3 regions
}

TEST(PipelineMpi, BenchReportsMemoryPerRankAndTheLargestFittingPatch) {
  ::medseg::test::ScratchDir scratch("pipeline-bench");
  const fs::path config = writeConfig(scratch / "config.json");
  const auto bench = runWorker(2, {"--run-dir", (scratch / "bench").string(), "--mode", "model", "--task", "bench", "--config",
                                   config.string(), "--micro-batches", "2", "--memory-per-device", "2000", "--bench-steps", "1",
                                   "--fit-max-edge", "96"});
  ASSERT_EQ(bench.exitCode, 0) << bench.output;
  const json report = json::parse(readTextFile(scratch / "bench" / "bench.json"));
  ASSERT_EQ(report["peak_rss_mb_per_rank"].size(), 2u);
  ASSERT_EQ(report["modelled_mb_per_stage"].size(), 2u);
  for (int r = 0; r < 2; ++r) {
    EXPECT_GT(report["peak_rss_mb_per_rank"][r].get<double>(), 10.0);
    EXPECT_GT(report["modelled_mb_per_stage"][r].get<double>(), 10.0);
  }
  EXPECT_GT(report["step_seconds"].get<double>(), 0.0);
  ASSERT_EQ(report["fit"].size(), 2u);
  EXPECT_GE(report["fit"][1]["largest_patch"].get<int>(), report["fit"][0]["largest_patch"].get<int>());
  // A budget below the runtime's own footprint fits nothing: a clear error, exit code 3 (bad input).
  const auto tooSmall = runWorker(2, {"--run-dir", (scratch / "small").string(), "--mode", "model", "--task", "bench", "--config",
                                      config.string(), "--memory-per-device", "1"});
  EXPECT_EQ(tooSmall.exitCode, 3) << tooSmall.output;
  EXPECT_NE(tooSmall.output.find("does not fit 2 stage(s)"), std::string::npos) << tooSmall.output;
}

// The budget holds the process' baseline too; under AddressSanitizer (shadow memory, redzones,
// quarantine) that baseline is a few hundred MiB larger.
#if defined(__SANITIZE_ADDRESS__)
constexpr const char* kBenchBudgetMb = "1000";
#else
constexpr const char* kBenchBudgetMb = "400";
#endif

TEST(PipelineMpi, BenchCommandComparesOneProcessWithTwoStages) {
  ::medseg::test::ScratchDir scratch("pipeline-bench-cli");
  const auto out = scratch / "bench";
  const auto run = ::medseg::test::runMedseg({"--json", "bench", "--pipeline", "--base-filters", "4", "--depth", "3", "--patch", "16",
                                              "--batch", "4", "--micro-batches", "2", "--steps", "1", "--memory-per-device", kBenchBudgetMb,
                                              "--fit-max-edge", "40", "--infer-size", "24,24,20", "--out", out.string()});
  ASSERT_EQ(run.exitCode, 0) << run.output;
  // The result is the last JSON line.
  std::string last = run.output.substr(0, run.output.find_last_not_of("\n") + 1);
  last = last.substr(last.rfind('\n') + 1);
  const json result = json::parse(last);
  EXPECT_EQ(result["kind"], "bench-pipeline");
  const json& training = result["training"];
  EXPECT_EQ(training["single"]["peak_rss_mb_per_rank"].size(), 1u);
  EXPECT_EQ(training["pipeline"]["peak_rss_mb_per_rank"].size(), 2u);
  EXPECT_GT(training["peak_rss_ratio"].get<double>(), 0.0);
  ASSERT_EQ(training["fit"].size(), 2u);
  ASSERT_TRUE(training.contains("fit_check")) << training.dump();
  EXPECT_EQ(training["fit_check"]["patch"], training["fit"][1]["largest_patch"]);
  EXPECT_EQ(training["fit_check"]["pipeline"]["peak_rss_mb_per_rank"].size(), 2u);
  for (const char* which : {"single", "pipeline"}) {
    const json& volume = result["inference"][which]["volume"];
    EXPECT_GT(volume["seconds"].get<double>(), 0.0) << which;
    EXPECT_EQ(volume["output"], json({4, 20, 24, 24})) << which;
  }
  EXPECT_TRUE(fs::exists(out / "pipeline-bench.json"));
  // Dice needs a trained model: --data alone is refused before anything runs.
  const auto refused = ::medseg::test::runMedseg({"bench", "--pipeline", "--data", scratch.path().string(), "--out",
                                                  (scratch / "refused").string()});
  EXPECT_EQ(refused.exitCode, 3) << refused.output;
}

}  // namespace
}  // namespace medseg::unet3d
