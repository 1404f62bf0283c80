// BraTS challenge folders read as downloaded: BraTS 2021 (..._flair/_t1/_t1ce/_t2/_seg, labels 1/2/4)
// and BraTS 2023+ (...-t2f/-t1n/-t1c/-t2w/-seg, labels 1/2/3), channels in MSD's order, labels as MSD's.
#include "core/dataset/BratsLayout.h"

#include <gtest/gtest.h>

#include <functional>

#include "TinyDatasets.h"
#include "core/dataset/DatasetChecker.h"
#include "support/TestSupport.h"

using namespace medseg;
using test::ScratchDir;

namespace {

// A case folder whose channel c holds the value 10 * (c + 1) where the MSD image has a nonzero voxel,
// and whose segmentation holds `codes` of the MSD labels 1, 2, 3.
void writeBratsCase(const std::filesystem::path& root, const std::string& id, const BratsEdition& edition,
                    const std::map<int, int>& msdToCode, bool withLabels) {
  const std::filesystem::path folder = root / id;
  std::filesystem::create_directories(folder);
  for (size_t c = 0; c < edition.suffixes.size(); ++c) {
    ImageVolume channel({8, 8, 6}, 1, test::tinyGeometry(), float(10 * (c + 1)));
    writeImage(channel, folder / (id + edition.separator + edition.suffixes[c] + ".nii.gz"));
  }
  if (!withLabels) return;
  LabelVolume labels({8, 8, 6}, 1, test::tinyGeometry(), 0);
  for (int64_t z = 0; z < 6; ++z) labels.at(1, 1, z) = static_cast<uint8_t>(msdToCode.at(1 + z % 3));
  writeLabels(labels, folder / (id + edition.separator + "seg.nii.gz"));
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

DatasetReport check(const Dataset& dataset) {
  Reporter reporter;
  return checkDataset(dataset, CheckOptions{}, reporter);
}

}  // namespace

TEST(BratsLayout, Brats2021ChannelsAndLabelCodesBecomeMsds) {
  ScratchDir root("brats2021");
  writeBratsCase(root.path(), "BraTS2021_00000", brats2021(), {{1, 2}, {2, 1}, {3, 4}}, true);
  writeBratsCase(root.path(), "BraTS2021_00001", brats2021(), {{1, 2}, {2, 1}, {3, 4}}, true);
  writeBratsCase(root.path(), "BraTS2021_00099", brats2021(), {}, false);  // a validation case: no segmentation
  ASSERT_TRUE(isBratsFolder(root.path()));
  ASSERT_TRUE(isDatasetFolder(root.path()));
  const Dataset dataset = loadDataset(root.path());
  EXPECT_EQ(dataset.layout, DatasetLayout::BraTS);
  EXPECT_EQ(dataset.edition, "BraTS 2021");
  EXPECT_EQ(dataset.modalities, (std::vector<std::string>{"FLAIR", "T1w", "T1gd", "T2w"}));
  ASSERT_EQ(dataset.training.size(), 2u);
  ASSERT_EQ(dataset.test.size(), 1u);
  EXPECT_EQ(dataset.test[0].id, "BraTS2021_00099");
  // FLAIR, T1, T1ce, T2 by suffix: channel c is the file of suffix c.
  const ImageVolume image = loadCaseImage(dataset.training[0]);
  ASSERT_EQ(image.channels, 4);
  for (int64_t c = 0; c < 4; ++c) EXPECT_EQ(image.at(0, 0, 0, c), float(10 * (c + 1)));
  // Stored 2 (edema), 1 (NCR/NET), 4 (ET) read as MSD's 1, 2, 3.
  const LabelVolume labels = loadCaseLabels(dataset.training[0]);
  for (int64_t z = 0; z < 6; ++z) EXPECT_EQ(labels.at(1, 1, z), 1 + z % 3) << z;
  EXPECT_EQ(dataset.storedLabels.at(4), 3);
  EXPECT_EQ(dataset.storedLabelNames.at(4), "ET");
  // A data-set check passes as for MSD.
  const DatasetReport report = check(dataset);
  EXPECT_EQ(report.errors, 0) << report.toText();
}

TEST(BratsLayout, Brats2023GliomaFolderReadsItsOwnCodes) {
  ScratchDir root("brats2023");
  writeBratsCase(root.path(), "BraTS-GLI-00000-000", brats2023(), {{1, 2}, {2, 1}, {3, 3}}, true);
  const Dataset dataset = loadDataset(root.path());
  EXPECT_EQ(dataset.edition, "BraTS 2023+");
  const LabelVolume labels = loadCaseLabels(dataset.training[0]);
  for (int64_t z = 0; z < 6; ++z) EXPECT_EQ(labels.at(1, 1, z), 1 + z % 3) << z;
  EXPECT_EQ(loadCaseImage(dataset.training[0]).at(0, 0, 0, 2), 30.0f);  // t1c is T1gd, the third channel
}

TEST(BratsLayout, MissingModalityUnknownLabelAndMixedEditionsAreReported) {
  ScratchDir root("brats-faults");
  writeBratsCase(root.path(), "BraTS2021_00000", brats2021(), {{1, 2}, {2, 1}, {3, 5}}, true);  // 5: no BraTS code
  writeBratsCase(root.path(), "BraTS2021_00001", brats2021(), {{1, 2}, {2, 1}, {3, 4}}, true);
  std::filesystem::remove(root.path() / "BraTS2021_00001" / "BraTS2021_00001_t1ce.nii.gz");
  const Dataset dataset = loadDataset(root.path());
  const std::string message = errorOf([&] { loadCaseLabels(dataset.training[0]); });
  EXPECT_NE(message.find("label value 5"), std::string::npos) << message;
  EXPECT_NE(message.find("0, 1, 2, 4"), std::string::npos) << message;
  const DatasetReport report = check(dataset);
  EXPECT_GE(report.errors, 2);
  std::string all;
  for (const auto& f : report.findings) all += f.message + "\n";
  EXPECT_NE(all.find("BraTS2021_00001_t1ce.nii.gz"), std::string::npos) << all;
  EXPECT_NE(all.find("label value 5"), std::string::npos) << all;

  writeBratsCase(root.path(), "BraTS-GLI-00002-000", brats2023(), {{1, 2}, {2, 1}, {3, 3}}, true);
  const std::string mixed = errorOf([&] { loadDataset(root.path()); });
  EXPECT_NE(mixed.find("mixes BraTS 2"), std::string::npos) << mixed;
  EXPECT_NE(mixed.find("keep one edition"), std::string::npos) << mixed;
  // An ordinary folder is no BraTS folder, and still needs its dataset.json.
  ScratchDir plain("not-brats");
  std::filesystem::create_directories(plain.path() / "case1");
  EXPECT_FALSE(isBratsFolder(plain.path()));
  EXPECT_NE(errorOf([&] { loadDataset(plain.path()); }).find("no dataset.json"), std::string::npos);
}
