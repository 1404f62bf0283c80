// `medseg dataset synth` through the built program, as a user or the studio runs it.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/dataset/Dataset.h"
#include "support/TestSupport.h"

namespace medseg {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;
using test::runMedseg;
using test::ScratchDir;

using test::jsonLines;  // every JSON line parses (a broken one throws), in order

TEST(DatasetSynthCli, WritesADatasetAndSummarises) {
  ScratchDir dir("cli-synth");
  const fs::path out = dir / "brats";
  const auto result = runMedseg({"dataset", "synth", "--out", out.string(), "--cases", "2", "--test-cases", "1",
                                 "--size", "40,40,32", "--seed", "3", "--threads", "2"});
  ASSERT_EQ(result.exitCode, 0) << result.output;
  EXPECT_TRUE(fs::exists(out / "dataset.json"));
  EXPECT_TRUE(fs::exists(out / "imagesTr/BRATS_001.nii.gz"));
  EXPECT_TRUE(fs::exists(out / "imagesTr/BRATS_002.nii.gz"));
  EXPECT_TRUE(fs::exists(out / "labelsTr/BRATS_002.nii.gz"));
  EXPECT_TRUE(fs::exists(out / "imagesTs/BRATS_003.nii.gz"));
  EXPECT_NE(result.output.find("40x40x32x4"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("enhancing tumour (3)"), std::string::npos) << result.output;  // the data set's own names
  EXPECT_NE(result.output.find("mL"), std::string::npos) << result.output;
  const Dataset dataset = loadDataset(out);
  EXPECT_EQ(dataset.training.size(), 2u);
  EXPECT_EQ(dataset.test.size(), 1u);

  // The same data set checks clean with `medseg dataset check`.
  const auto check = runMedseg({"dataset", "check", out.string()});
  EXPECT_EQ(check.exitCode, 0) << check.output;
}

TEST(DatasetSynthCli, JsonReportsProgressAndResult) {
  ScratchDir dir("cli-synth-json");
  const fs::path out = dir / "brats";
  const auto result = runMedseg({"--json", "dataset", "synth", "--out", out.string(), "--cases", "2", "--size", "32",
                                 "--phantom"});
  ASSERT_EQ(result.exitCode, 0) << result.output;
  const auto events = jsonLines(result.output);
  ASSERT_FALSE(events.empty()) << result.output;
  int progress = 0, results = 0;
  json final;
  for (const auto& event : events) {
    ASSERT_TRUE(event.contains("event")) << event.dump();
    if (event["event"] == "progress") ++progress;
    if (event["event"] == "result") {
      ++results;
      final = event;
    }
  }
  EXPECT_GE(progress, 1);
  ASSERT_EQ(results, 1) << result.output;
  EXPECT_EQ(events.back()["event"], "result");
  EXPECT_EQ(final["kind"], "dataset-synth");
  EXPECT_EQ(final["cases"], 2);
  EXPECT_EQ(final["used_template"], false);
  EXPECT_EQ(final["source"], "procedural phantom");
  EXPECT_EQ(final["size"], json::array({32, 32, 32}));
  EXPECT_GT(final["labels"]["3"]["mean_voxels"].get<double>(), 0.0);
  EXPECT_EQ(fs::path(final["output_dir"].get<std::string>()), fs::absolute(out).lexically_normal());
}

TEST(DatasetSynthCli, InvalidOptionsAreUsageErrors) {
  ScratchDir dir("cli-synth-usage");
  const std::string out = (dir / "x").string();
  EXPECT_EQ(runMedseg({"dataset", "synth", "--out", out, "--cases", "0"}).exitCode, 2);
  EXPECT_EQ(runMedseg({"dataset", "synth", "--out", out, "--size", "8"}).exitCode, 2);
  EXPECT_EQ(runMedseg({"dataset", "synth", "--out", out, "--size", "96,96"}).exitCode, 2);
  EXPECT_EQ(runMedseg({"dataset", "synth", "--out", out, "--size", "abc"}).exitCode, 2);
  EXPECT_EQ(runMedseg({"dataset", "synth", "--cases", "2"}).exitCode, 2);  // --out is required
  EXPECT_FALSE(fs::exists(dir / "x"));
}

TEST(DatasetSynthCli, ForeignFolderIsBadInput) {
  ScratchDir dir("cli-synth-foreign");
  { std::ofstream(dir / "keep.txt") << "someone else's"; }
  const auto result = runMedseg({"dataset", "synth", "--out", dir.path().string(), "--cases", "1", "--size", "32"});
  EXPECT_EQ(result.exitCode, 3) << result.output;
  EXPECT_NE(result.output.find("not empty"), std::string::npos) << result.output;
  EXPECT_FALSE(fs::exists(dir / "imagesTr"));
}

}  // namespace
}  // namespace medseg
