#include "core/dataset/DatasetChecker.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "TinyDatasets.h"
#include "support/TestSupport.h"

namespace medseg {
namespace {
namespace fs = std::filesystem;
using test::ScratchDir;

DatasetReport check(const fs::path& root, CheckOptions options = {}) {
  Reporter quiet(OutputMode::Human);
  return checkDataset(loadDataset(root), options, quiet);
}

std::vector<const Finding*> findingsWith(const DatasetReport& report, const std::string& code) {
  std::vector<const Finding*> found;
  for (const auto& f : report.findings)
    if (f.code == code) found.push_back(&f);
  return found;
}

// Exactly one finding with `code`, an error, about `caseId`; its message contains `text`.
void expectOnlyError(const DatasetReport& report, const std::string& code, const std::string& caseId,
                     const std::string& text = "") {
  const auto found = findingsWith(report, code);
  ASSERT_EQ(found.size(), 1u) << report.toText();
  EXPECT_EQ(found[0]->severity, Severity::Error);
  EXPECT_EQ(found[0]->caseId, caseId);
  EXPECT_NE(found[0]->message.find(text), std::string::npos) << found[0]->message;
  EXPECT_FALSE(report.ok());
  for (const auto& c : report.cases) EXPECT_EQ(c.errors > 0, c.id == caseId) << c.id << "\n" << report.toText();
}

TEST(DatasetChecker, CleanDatasetHasNoFindings) {
  ScratchDir dir("chk-clean");
  test::makeMsdDataset(dir.path(), 3, 1);
  const DatasetReport report = check(dir.path());
  EXPECT_TRUE(report.ok()) << report.toText();
  EXPECT_EQ(report.errors, 0);
  EXPECT_EQ(report.warnings, 0) << report.toText();
  ASSERT_EQ(report.cases.size(), 4u);
  const CaseCheck& first = report.cases[0];
  EXPECT_EQ(first.id, "case_000");
  EXPECT_EQ(first.size, test::kTinySize);
  EXPECT_EQ(first.channels, 2);
  EXPECT_EQ(first.labelSize, test::kTinySize);
  EXPECT_DOUBLE_EQ(first.geometry.spacing[2], 2.0);
  EXPECT_GT(first.bytes, 0u);
  EXPECT_TRUE(first.voxelsChecked);
  EXPECT_EQ(first.nonFinite, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(first.labelCounts.at(2), 2);
  EXPECT_EQ(first.labelCounts.at(3), 1);
  EXPECT_TRUE(report.cases[3].test);

  const auto json = report.to_json();
  EXPECT_EQ(json["layout"], "msd");
  EXPECT_EQ(json["ok"], true);
  EXPECT_EQ(json["cases"].size(), 4u);
  EXPECT_EQ(json["cases"][0]["size"], nlohmann::json({8, 8, 6}));
  EXPECT_EQ(json["cases"][0]["label_counts"]["3"], 1);
  EXPECT_NE(report.toText().find("case_003"), std::string::npos);
}

TEST(DatasetChecker, FindsMissingImageFile) {
  ScratchDir dir("chk-missing");
  test::makeMsdDataset(dir.path(), 3, 0);
  fs::remove(dir / "imagesTr/case_001.nii.gz");
  expectOnlyError(check(dir.path()), "missing-file", "case_001", "imagesTr/case_001.nii.gz does not exist");
}

TEST(DatasetChecker, FindsLabelShapeMismatch) {
  ScratchDir dir("chk-shape");
  test::makeMsdDataset(dir.path(), 3, 0);
  writeLabels(test::tinyLabels({8, 8, 5}), dir / "labelsTr/case_002.nii.gz");
  expectOnlyError(check(dir.path()), "shape-mismatch", "case_002", "8x8x5");
}

TEST(DatasetChecker, FindsSpacingMismatch) {
  ScratchDir dir("chk-geometry");
  test::makeMsdDataset(dir.path(), 3, 0);
  Geometry other = test::tinyGeometry();
  other.spacing = {1.0, 1.0, 1.0};
  writeLabels(test::tinyLabels(test::kTinySize, other), dir / "labelsTr/case_000.nii.gz");
  expectOnlyError(check(dir.path()), "geometry-mismatch", "case_000", "spacing 1x1x1 vs 1.5x1.5x2");
}

TEST(DatasetChecker, FindsUndeclaredLabelValue) {
  ScratchDir dir("chk-labels");
  test::makeMsdDataset(dir.path(), 3, 0);
  LabelVolume labels = test::tinyLabels();
  labels.at(0, 0, 0) = 5;
  labels.at(1, 0, 0) = 5;
  writeLabels(labels, dir / "labelsTr/case_001.nii.gz");
  const DatasetReport report = check(dir.path());
  expectOnlyError(report, "label-values", "case_001", "5 (2 voxels)");
  EXPECT_EQ(report.cases[1].labelCounts.at(5), 2);
}

TEST(DatasetChecker, FindsNonFiniteVoxels) {
  ScratchDir dir("chk-nan");
  test::makeMsdDataset(dir.path(), 3, 0);
  ImageVolume image = test::tinyImage(2);
  image.at(1, 2, 3, 1) = std::numeric_limits<float>::quiet_NaN();
  writeImage(image, dir / "imagesTr/case_002.nii.gz");
  const DatasetReport report = check(dir.path());
  expectOnlyError(report, "non-finite", "case_002", "channel 1 (T1w) has 1 NaN voxel");
  EXPECT_EQ(report.cases[2].nonFinite, (std::vector<int64_t>{0, 1}));

  CheckOptions headerOnly;
  headerOnly.headerOnly = true;
  const DatasetReport quick = check(dir.path(), headerOnly);
  EXPECT_TRUE(quick.ok()) << "header-only checks do not read voxels";
  EXPECT_FALSE(quick.cases[2].voxelsChecked);
}

TEST(DatasetChecker, FindsWrongChannelCount) {
  ScratchDir dir("chk-channels");
  test::makeMsdDataset(dir.path(), 3, 0);
  writeImage(test::tinyImage(0, 3), dir / "imagesTr/case_000.nii.gz");
  expectOnlyError(check(dir.path()), "channel-count", "case_000", "3 channels but dataset.json names 2 modalities");
}

TEST(DatasetChecker, UnreadableFileIsAFindingAndOtherCasesAreChecked) {
  ScratchDir dir("chk-unreadable");
  test::makeMsdDataset(dir.path(), 3, 0);
  test::writeText(dir / "imagesTr/case_001.nii.gz", "this is not a NIfTI file");
  const DatasetReport report = check(dir.path());
  expectOnlyError(report, "unreadable", "case_001");
  EXPECT_TRUE(report.cases[2].voxelsChecked);
}

TEST(DatasetChecker, DatasetLevelFindings) {
  ScratchDir dir("chk-level");
  test::makeMsdDataset(dir.path(), 2, 0);
  nlohmann::json doc = test::msdDatasetJson(2, 0);
  doc["numTraining"] = 5;
  doc["labels"]["4"] = "never used";
  test::writeText(dir / "dataset.json", doc.dump());
  const DatasetReport report = check(dir.path());
  EXPECT_TRUE(report.ok()) << "warnings only";
  EXPECT_EQ(findingsWith(report, "numTraining").size(), 1u) << report.toText();
  ASSERT_EQ(findingsWith(report, "unused-label").size(), 1u) << report.toText();
  EXPECT_NE(findingsWith(report, "unused-label")[0]->message.find("never used"), std::string::npos);

  test::writeText(dir / "dataset.json", test::msdDatasetJson(0, 0).dump());
  const DatasetReport empty = check(dir.path());
  EXPECT_FALSE(empty.ok());
  EXPECT_EQ(findingsWith(empty, "no-training-cases").size(), 1u);
}

TEST(DatasetChecker, EscapeInAnInMemoryDatasetIsNotRead) {
  ScratchDir dir("chk-escape");
  ScratchDir outside("chk-escape-outside");
  test::makeMsdDataset(dir.path(), 2, 0);
  Dataset dataset = loadDataset(dir.path());
  writeImage(test::tinyImage(0), outside / "x.nii.gz");
  dataset.training[1].images = {outside / "x.nii.gz"};
  Reporter quiet;
  const DatasetReport report = checkDataset(dataset, {}, quiet);
  expectOnlyError(report, "escape", "case_001", "outside the data-set folder");
  EXPECT_FALSE(report.cases[1].headerRead);
}

TEST(DatasetChecker, NnUNetMissingChannelAndChannelGridMismatch) {
  ScratchDir dir("chk-nnunet");
  test::makeNnUNetDataset(dir.path(), 3, 0);
  EXPECT_TRUE(check(dir.path()).ok()) << check(dir.path()).toText();
  fs::remove(test::nnunetChannelFile(dir.path(), "imagesTr", 0, 1));
  writeImage(test::tinyImage(2, 1, {8, 7, 6}), test::nnunetChannelFile(dir.path(), "imagesTr", 2, 1));
  const DatasetReport report = check(dir.path());
  ASSERT_EQ(findingsWith(report, "missing-file").size(), 1u) << report.toText();
  EXPECT_EQ(findingsWith(report, "missing-file")[0]->caseId, "case_000");
  ASSERT_EQ(findingsWith(report, "shape-mismatch").size(), 1u) << report.toText();
  EXPECT_EQ(findingsWith(report, "shape-mismatch")[0]->caseId, "case_002");
  EXPECT_EQ(report.cases[1].errors, 0);
  EXPECT_EQ(report.to_json()["layout"], "nnunet-v2");
}

TEST(DatasetChecker, ParallelReportEqualsSerialAndFindingsAreLimited) {
  ScratchDir dir("chk-parallel");
  test::makeMsdDataset(dir.path(), 6, 2);
  fs::remove(dir / "imagesTr/case_001.nii.gz");
  fs::remove(dir / "labelsTr/case_004.nii.gz");
  writeLabels(test::tinyLabels({8, 8, 5}), dir / "labelsTr/case_005.nii.gz");
  nlohmann::json doc = test::msdDatasetJson(6, 2);
  doc["numTraining"] = 7;  // a warning, listed first
  test::writeText(dir / "dataset.json", doc.dump());
  CheckOptions serial, parallel;
  parallel.threads = 3;
  auto serialJson = check(dir.path(), serial).to_json();
  auto parallelJson = check(dir.path(), parallel).to_json();
  serialJson.erase("seconds");
  parallelJson.erase("seconds");
  EXPECT_EQ(serialJson, parallelJson);
  EXPECT_EQ(serialJson["errors"], 3);

  CheckOptions limited;
  limited.maxFindings = 2;
  const DatasetReport report = check(dir.path(), limited);
  ASSERT_EQ(report.findings.size(), 2u);
  EXPECT_EQ(report.findingsOmitted, 2u);
  EXPECT_EQ(report.errors, 3);
  EXPECT_EQ(report.warnings, 1);
  for (const auto& f : report.findings) EXPECT_EQ(f.severity, Severity::Error) << "errors are kept first";
  EXPECT_NE(report.toText().find("2 more"), std::string::npos);
}

}  // namespace
}  // namespace medseg
