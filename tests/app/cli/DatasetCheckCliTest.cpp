// `medseg dataset check` and `medseg dataset info` through the built program, as a user or the
// studio runs them.
#include <gtest/gtest.h>

#include <limits>
#include <set>
#include <sstream>

#include "core/dataset/TinyDatasets.h"
#include "support/TestSupport.h"

namespace medseg {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;
using test::runMedseg;
using test::ScratchDir;

// Every JSON line of the output (stderr shares the stream, so other lines are skipped) must parse;
// returns the single "result" event.
json onlyResultEvent(const std::string& output) {
  std::istringstream lines(output);
  std::string line;
  json result;
  int results = 0;
  while (std::getline(lines, line)) {
    if (line.empty() || line.front() != '{') continue;
    const json event = json::parse(line);  // throws, failing the test, on a broken line
    EXPECT_TRUE(event.contains("event")) << line;
    if (event["event"] == "result") {
      result = event;
      ++results;
    }
  }
  EXPECT_EQ(results, 1) << output;
  return result;
}

TEST(DatasetCheckCli, CleanDatasetExitsZero) {
  ScratchDir dir("cli-check-clean");
  test::makeMsdDataset(dir.path(), 2, 1);
  const auto result = runMedseg({"dataset", "check", dir.path().string()});
  EXPECT_EQ(result.exitCode, 0) << result.output;
  EXPECT_NE(result.output.find("case_000"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("8x8x6x2"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("0 errors"), std::string::npos) << result.output;
}

TEST(DatasetCheckCli, PlantedFaultsExitOneAndAreListedInJson) {
  ScratchDir dir("cli-check-faults");
  test::makeMsdDataset(dir.path(), 3, 0);
  LabelVolume labels = test::tinyLabels();
  labels.at(0, 0, 0) = 5;
  writeLabels(labels, dir / "labelsTr/case_001.nii.gz");
  ImageVolume image = test::tinyImage(2);
  image.at(0, 0, 0, 0) = std::numeric_limits<float>::infinity();
  writeImage(image, dir / "imagesTr/case_002.nii.gz");

  const auto human = runMedseg({"dataset", "check", dir.path().string()});
  EXPECT_EQ(human.exitCode, 1) << human.output;
  EXPECT_NE(human.output.find("label-values"), std::string::npos) << human.output;
  EXPECT_NE(human.output.find("non-finite"), std::string::npos) << human.output;

  const auto machine = runMedseg({"--json", "dataset", "check", dir.path().string()});
  EXPECT_EQ(machine.exitCode, 1) << machine.output;
  const json result = onlyResultEvent(machine.output);
  EXPECT_EQ(result["kind"], "dataset-check");
  EXPECT_EQ(result["ok"], false);
  EXPECT_EQ(result["errors"], 2);
  EXPECT_EQ(result["exit_code"], 1);
  EXPECT_EQ(result["cases"].size(), 3u);
  std::set<std::pair<std::string, std::string>> found;
  for (const auto& f : result["findings"]) found.emplace(f["code"], f["case"]);
  EXPECT_TRUE(found.count({"label-values", "case_001"})) << result.dump(2);
  EXPECT_TRUE(found.count({"non-finite", "case_002"})) << result.dump(2);

  // Header-only skips voxel checks, so these faults pass.
  const auto quick = runMedseg({"dataset", "check", dir.path().string(), "--header-only"});
  EXPECT_EQ(quick.exitCode, 0) << quick.output;
}

TEST(DatasetCheckCli, MissingFileAndMaxFindings) {
  ScratchDir dir("cli-check-missing");
  test::makeMsdDataset(dir.path(), 3, 0);
  fs::remove(dir / "imagesTr/case_000.nii.gz");
  fs::remove(dir / "labelsTr/case_002.nii.gz");
  const auto result = runMedseg({"--json", "dataset", "check", dir.path().string(), "--max-findings", "1"});
  EXPECT_EQ(result.exitCode, 1) << result.output;
  const json event = onlyResultEvent(result.output);
  EXPECT_EQ(event["findings"].size(), 1u);
  EXPECT_EQ(event["findings"][0]["code"], "missing-file");
  EXPECT_EQ(event["findings_omitted"], 1);
  EXPECT_EQ(event["errors"], 2);
}

TEST(DatasetCheckCli, UnusableDatasetJsonExitsThree) {
  ScratchDir dir("cli-check-escape");
  test::makeMsdDataset(dir.path(), 2, 0);
  json doc = test::msdDatasetJson(2, 0);
  doc["training"][1]["image"] = "../../etc/passwd";
  test::writeText(dir / "dataset.json", doc.dump());
  const auto human = runMedseg({"dataset", "check", dir.path().string()});
  EXPECT_EQ(human.exitCode, 3) << human.output;
  EXPECT_NE(human.output.find("training[1].image"), std::string::npos) << human.output;

  const auto machine = runMedseg({"--json", "dataset", "check", dir.path().string()});
  EXPECT_EQ(machine.exitCode, 3);
  EXPECT_NE(machine.output.find("\"event\":\"error\""), std::string::npos) << machine.output;

  test::writeText(dir / "dataset.json", "{ not json");
  EXPECT_EQ(runMedseg({"dataset", "check", dir.path().string()}).exitCode, 3);
  EXPECT_EQ(runMedseg({"dataset", "check", (dir / "nowhere").string()}).exitCode, 3);
  EXPECT_EQ(runMedseg({"dataset", "info", (dir / "nowhere").string()}).exitCode, 3);
}

TEST(DatasetCheckCli, InfoDescribesDataset) {
  ScratchDir dir("cli-info");
  test::makeMsdDataset(dir.path(), 3, 1);
  const auto human = runMedseg({"dataset", "info", dir.path().string()});
  EXPECT_EQ(human.exitCode, 0) << human.output;
  for (const char* text : {"TinyTumour", "MSD", "FLAIR", "enhancing tumour", "3 cases", "8x8x6x2"})
    EXPECT_NE(human.output.find(text), std::string::npos) << text << "\n" << human.output;

  ScratchDir nn("cli-info-nnunet");
  test::makeNnUNetDataset(nn.path(), 2, 1);
  const auto machine = runMedseg({"--json", "dataset", "info", nn.path().string()});
  EXPECT_EQ(machine.exitCode, 0) << machine.output;
  const json info = onlyResultEvent(machine.output);
  EXPECT_EQ(info["kind"], "dataset-info");
  EXPECT_EQ(info["layout"], "nnunet-v2");
  EXPECT_EQ(info["training_cases"], 2);
  EXPECT_EQ(info["test_cases"], 1);
  EXPECT_EQ(info["modalities"], json({"FLAIR", "T1w"}));
  EXPECT_EQ(info["labels"]["1"], "edema");
  EXPECT_EQ(info["first_case"]["id"], "case_000");
  EXPECT_EQ(info["first_case"]["size"], json({8, 8, 6}));
  EXPECT_EQ(info["first_case"]["channels"], 2);
}

}  // namespace
}  // namespace medseg
