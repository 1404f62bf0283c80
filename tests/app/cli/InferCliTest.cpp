// `medseg infer` with a model `medseg train` just made: a whole data-set folder into a folder (one
// mask per case, one metric event each), one image into one file with its probabilities, and option
// mistakes refused as bad input.
#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "core/io/ImageIO.h"
#include "core/io/LabelTable.h"
#include "support/TestSupport.h"

namespace medseg {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using test::jsonLines;
using test::resultEvent;
using test::tinyTestConfig;

TEST(InferCli, TrainedModelSegmentsADataSetFolderAndOneImage) {
  test::ScratchDir dir("infer-cli");
  const fs::path data = dir / "data";
  ASSERT_EQ(test::runMedseg({"dataset", "synth", "--out", data.string(), "--cases", "4", "--size", "32", "--phantom"})
                .exitCode, 0);
  const auto train = test::runMedseg({"--json", "train", "--config", tinyTestConfig(), "--data",
                                      data.string(), "--out", (dir / "run").string()});
  ASSERT_EQ(train.exitCode, 0) << train.output;
  const json trained = resultEvent(train.output);
  EXPECT_EQ(trained["steps"], 6) << train.output;
  const fs::path best = trained["best_checkpoint"].get<std::string>();
  ASSERT_TRUE(fs::exists(best));

  // A whole data-set folder (training cases) into a folder, and one image into one file.
  const auto folder = test::runMedseg({"--json", "infer", "--model", best.string(), "--input", data.string(), "--subset",
                                       "training", "--out", (dir / "masks").string(), "--whole-volume"});
  ASSERT_EQ(folder.exitCode, 0) << folder.output;
  const json inferred = resultEvent(folder.output);
  EXPECT_EQ(inferred["model_kind"], "medseg");
  EXPECT_EQ(inferred["succeeded"], 4);
  EXPECT_EQ(inferred["failed"], 0);
  EXPECT_EQ(inferred["exit_code"], 0);
  // --precision auto (the default): bf16 where this CPU computes it natively, through the network as
  // saved (autocast reaches only ordinary operators); float32 through the optimised graph elsewhere.
  const std::string precision = inferred["precision"];
  if (precision.rfind("bf16 (auto: ", 0) == 0) {
    EXPECT_EQ(inferred["model_preparation"], "as saved (bf16 autocast)");
  } else {
    EXPECT_EQ(precision, "fp32 (auto: this CPU has no native bf16)");
    EXPECT_EQ(inferred["model_preparation"].get<std::string>().rfind("frozen and optimised for inference", 0), 0u);
  }
  int caseMetrics = 0;
  for (const auto& event : jsonLines(folder.output))
    if (event["event"] == "metric" && event["kind"] == "infer-case") ++caseMetrics;
  EXPECT_EQ(caseMetrics, 4);
  for (const auto& c : inferred["cases"]) {
    const fs::path mask = c["output"].get<std::string>();
    EXPECT_EQ(mask.parent_path(), dir / "masks");
    const LabelVolume labels = readLabels(mask);
    EXPECT_EQ(labels.size, (Size3{32, 32, 32}));
  }
  const fs::path image = fs::path(inferred["cases"][0]["output"].get<std::string>()).filename();
  const auto single = test::runMedseg({"infer", "--model", best.string(), "--input", (data / "imagesTr" / image).string(),
                                       "--out", (dir / "one.nii.gz").string(), "--roi", "16", "--probabilities",
                                       "--precision", "fp32"});
  ASSERT_EQ(single.exitCode, 0) << single.output;
  EXPECT_NE(single.output.find("1 of 1 case(s) segmented"), std::string::npos) << single.output;
  EXPECT_NE(single.output.find("on all cores, fp32, regions)"), std::string::npos) << single.output;  // what ran
  EXPECT_TRUE(fs::exists(dir / "one.nii.gz"));
  EXPECT_TRUE(fs::exists(dir / "one_probabilities.nii.gz"));
  // Beside each mask its ITK-SNAP label file (and a Slicer colour table), so both show our names.
  const LabelTable snap = readLabelTable(dir / "one.label.txt");
  ASSERT_EQ(snap.entries.size(), 3u);
  EXPECT_EQ(snap.entries.at(1).name, "edema");
  EXPECT_EQ(snap.entries.at(2).name, "non-enhancing");
  EXPECT_EQ(snap.entries.at(3).name, "enhancing");
  EXPECT_EQ(snap.entries.at(3).rgb, bratsLabelTable().entries.at(3).rgb);
  EXPECT_EQ(readLabelTable(dir / "one.ctbl").entries.at(1).name, "edema");
  EXPECT_TRUE(fs::exists(fs::path(inferred["cases"][0]["output"].get<std::string>()).replace_extension().replace_extension(".label.txt")));
  // Option mistakes are bad input before anything is loaded.
  EXPECT_EQ(test::runMedseg({"infer", "--model", best.string(), "--input", data.string(), "--out", (dir / "x").string(),
                             "--overlap", "1.5"}).exitCode, 3);
}

}  // namespace
}  // namespace medseg
