// BraTS challenge folders as downloaded, through the commands a researcher types: `medseg dataset
// check`, a tiny `medseg train`, `medseg infer` on the folder (masks in the folder's own label codes) and
// `medseg evaluate` against it, for BraTS 2021 (labels 1 NCR/NET, 2 ED, 4 ET) and BraTS 2023 (1 NETC,
// 2 SNFH, 3 ET); and `medseg dataset convert` to MSD. The cases are the synthetic generator's, written
// in the challenge's names and label codes.
#include <gtest/gtest.h>

#include <set>

#include "core/dataset/BratsLayout.h"
#include "core/io/ImageIO.h"
#include "core/io/LabelTable.h"
#include "support/SharedSuite.h"
#include "support/TestSupport.h"

namespace medseg {
namespace {
namespace fs = std::filesystem;

// MSD cases (FLAIR, T1w, T1gd, T2w; 1 edema, 2 non-enhancing, 3 enhancing) as a challenge folder.
void writeAsBrats(const fs::path& msd, const fs::path& out, const BratsEdition& edition, const std::string& prefix) {
  const Dataset source = loadDataset(msd);
  std::map<int, int> msdToCode;
  for (const auto& [code, value] : edition.storedToMsd) msdToCode[value] = code;
  int index = 0;
  for (const auto* list : {&source.training, &source.test})
    for (const auto& entry : *list) {
      char number[32];
      std::snprintf(number, sizeof number, prefix == "BraTS2021_" ? "%05d" : "%05d-000", index++);
      const std::string id = prefix + number;
      fs::create_directories(out / id);
      const ImageVolume image = loadCaseImage(entry);
      for (int64_t c = 0; c < 4; ++c)
        writeImage(extractChannel(image, c), out / id / (id + edition.separator + edition.suffixes[c] + ".nii.gz"));
      if (entry.label.empty()) continue;
      LabelVolume labels = loadCaseLabels(entry);
      for (auto& v : labels.data) v = static_cast<uint8_t>(msdToCode.at(v));
      writeLabels(labels, out / id / (id + edition.separator + "seg.nii.gz"));
    }
}

std::set<int> valuesIn(const LabelVolume& labels) { return std::set<int>(labels.data.begin(), labels.data.end()); }

struct BratsCliShared {
  test::ScratchDir scratch{"brats-cli"};
};
// Set up in the first test that runs, not in SetUpTestSuite (whose failure ctest would count as a
// skip): tests/support/SharedSuite.h.
test::SharedSuite<BratsCliShared> bratsCliSuite;

class BratsCli : public ::testing::Test {
 protected:
  static void prepare() {
    const fs::path msd = bratsCliSuite->scratch / "msd";
    const auto made = test::runMedseg({"dataset", "synth", "--out", msd.string(), "--cases", "3", "--test-cases", "1",
                                       "--seed", "4", "--size", "32"});
    ASSERT_EQ(made.exitCode, 0) << made.output;
    writeAsBrats(msd, bratsCliSuite->scratch / "brats2021", brats2021(), "BraTS2021_");
    writeAsBrats(msd, bratsCliSuite->scratch / "brats2023", brats2023(), "BraTS-GLI-");
  }
  void SetUp() override {
    const bool ready = bratsCliSuite.prepareOnce(prepare);
    ASSERT_TRUE(ready) << bratsCliSuite.failure();
    scratch_ = &bratsCliSuite->scratch;
  }
  static void TearDownTestSuite() { bratsCliSuite.reset(); }
  test::ScratchDir* scratch_ = nullptr;
};

TEST_F(BratsCli, Brats2021FolderChecksTrainsSegmentsInItsCodesAndEvaluates) {
  const fs::path data = *scratch_ / "brats2021";
  const auto check = test::runMedseg({"dataset", "check", data.string()});
  ASSERT_EQ(check.exitCode, 0) << check.output;
  EXPECT_NE(check.output.find("BraTS"), std::string::npos) << check.output;
  const auto trained = test::runMedseg({"train", "--config", test::tinyTestConfig(), "--data", data.string(), "--out",
                                        (*scratch_ / "run2021").string()});
  ASSERT_EQ(trained.exitCode, 0) << trained.output;
  const fs::path masks = *scratch_ / "masks2021";
  const auto inferred = test::runMedseg({"infer", "--model", (*scratch_ / "run2021" / "best.pt").string(), "--input",
                                         data.string(), "--subset", "all", "--out", masks.string()});
  ASSERT_EQ(inferred.exitCode, 0) << inferred.output;
  // Every case, in the challenge's codes: enhancing tumour is 4, never 3; the table names them so.
  std::set<int> seen;
  for (const std::string id : {"BraTS2021_00000", "BraTS2021_00001", "BraTS2021_00002", "BraTS2021_00003"}) {
    const LabelVolume mask = readLabels(masks / (id + ".nii.gz"));
    for (int v : valuesIn(mask)) seen.insert(v);
  }
  EXPECT_FALSE(seen.count(3)) << "BraTS 2021 has no label 3";
  EXPECT_TRUE(std::includes(std::set<int>{0, 1, 2, 4}.begin(), std::set<int>{0, 1, 2, 4}.end(), seen.begin(), seen.end()));
  const auto table = findLabelTableFor(masks / "BraTS2021_00000.nii.gz");
  ASSERT_TRUE(table.has_value());
  EXPECT_EQ(table->entries.at(4).name, "ET");
  // Evaluated against the folder as downloaded: both sides read in MSD's values.
  const auto evaluated = test::runMedseg({"--json", "evaluate", "--pred", masks.string(), "--ref", data.string()});
  // The unlabelled (test) case's mask has no reference: reported, and the 3 labelled ones scored.
  int scored = 0;
  for (const auto& event : test::jsonLines(evaluated.output))
    if (event.value("kind", "") == "evaluate-case") ++scored;
  EXPECT_EQ(scored, 3) << evaluated.output;
  EXPECT_NE(evaluated.output.find("BraTS2021_00003"), std::string::npos) << "the unmatched mask is named";
}

TEST_F(BratsCli, Brats2023FolderSegmentsInItsCodesAndConvertsToMsd) {
  const fs::path data = *scratch_ / "brats2023";
  ASSERT_EQ(test::runMedseg({"dataset", "check", data.string()}).exitCode, 0);
  const auto trained = test::runMedseg({"train", "--config", test::tinyTestConfig(), "--data", data.string(), "--out",
                                        (*scratch_ / "run2023").string(), "--set", "epochs=1"});
  ASSERT_EQ(trained.exitCode, 0) << trained.output;
  const fs::path masks = *scratch_ / "masks2023";
  ASSERT_EQ(test::runMedseg({"infer", "--model", (*scratch_ / "run2023" / "best.pt").string(), "--input", data.string(),
                             "--subset", "training", "--out", masks.string()}).exitCode, 0);
  const auto table = findLabelTableFor(masks / "BraTS-GLI-00000-000.nii.gz");
  ASSERT_TRUE(table.has_value());
  EXPECT_EQ(table->entries.at(2).name, "SNFH");
  const auto evaluated = test::runMedseg({"evaluate", "--pred", masks.string(), "--ref", data.string()});
  EXPECT_EQ(evaluated.exitCode, 0) << evaluated.output;

  // Converted for tools that read MSD: one 4-D image per case, labels in MSD's values.
  const fs::path msd = *scratch_ / "converted";
  const auto converted = test::runMedseg({"dataset", "convert", data.string(), "--to", "msd", "--out", msd.string()});
  ASSERT_EQ(converted.exitCode, 0) << converted.output;
  ASSERT_EQ(test::runMedseg({"dataset", "check", msd.string()}).exitCode, 0);
  const Dataset again = loadDataset(msd);
  EXPECT_EQ(again.layout, DatasetLayout::MSD);
  EXPECT_EQ(again.training.size(), 3u);
  const LabelVolume original = loadCaseLabels(loadDataset(data).training[0]);
  EXPECT_EQ(readLabels(again.training[0].label).data, original.data);
  // Into a folder that is not empty: refused, nothing written.
  const auto again2 = test::runMedseg({"dataset", "convert", data.string(), "--to", "nnunet", "--out", msd.string()});
  EXPECT_EQ(again2.exitCode, 3) << again2.output;
  EXPECT_NE(again2.output.find("not empty"), std::string::npos) << again2.output;
}

}  // namespace
}  // namespace medseg
