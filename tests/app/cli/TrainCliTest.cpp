// `medseg train` end to end on a tiny data set: run folder, JSON events, resume, bad config.
#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "core/dataset/Dataset.h"
#include "core/io/ImageIO.h"
#include "core/util/AtomicFile.h"
#include "support/TestSupport.h"

namespace medseg {
namespace {

void writeTinyDataset(const std::filesystem::path& root) {
  std::filesystem::create_directories(root / "imagesTr");
  std::filesystem::create_directories(root / "labelsTr");
  Dataset dataset;
  dataset.root = root;
  dataset.name = "tiny";
  dataset.modalities = {"FLAIR", "T1gd"};
  dataset.labels = {{0, "background"}, {1, "edema"}, {2, "non-enhancing tumour"}, {3, "enhancing tumour"}};
  for (int i = 0; i < 5; ++i) {
    ImageVolume image({20, 20, 20}, 2);
    LabelVolume labels({20, 20, 20}, 1);
    for (int64_t z = 2; z < 18; ++z)
      for (int64_t y = 2; y < 18; ++y)
        for (int64_t x = 2; x < 18; ++x) {
          const bool tumour = std::abs(x - 8 - i) < 3 && std::abs(y - 10) < 3 && std::abs(z - 10) < 3;
          labels.at(x, y, z) = tumour ? 1 + (x % 3) : 0;
          image.at(x, y, z, 0) = tumour ? 3.0f : 1.0f + 0.01f * static_cast<float>((x * 7 + y * 3 + z) % 5);
          image.at(x, y, z, 1) = 1.0f;
        }
    const std::string id = "TINY_" + std::to_string(i);
    CaseEntry entry{id, {root / "imagesTr" / (id + ".nii.gz")}, root / "labelsTr" / (id + ".nii.gz")};
    writeImage(image, entry.images.front());
    writeLabels(labels, entry.label);
    dataset.training.push_back(entry);
  }
  writeMsdDatasetJson(dataset);
}

TEST(TrainCli, TinyRunWritesRunFolderAndJsonEvents) {
  test::ScratchDir dir("train-cli");
  writeTinyDataset(dir / "data");
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
