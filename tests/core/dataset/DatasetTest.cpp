#include "core/dataset/Dataset.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "TinyDatasets.h"
#include "core/util/AtomicFile.h"
#include "support/TestSupport.h"

namespace medseg {
namespace {
namespace fs = std::filesystem;
using test::ScratchDir;
using nlohmann::json;

// The DatasetError message of loadDataset, or "" when it loads.
std::string loadError(const fs::path& root) {
  try {
    loadDataset(root);
  } catch (const DatasetError& e) {
    return e.what();
  }
  return "";
}

std::string resolveError(const fs::path& root, const std::string& relative) {
  try {
    resolveInsideDataset(root, relative);
  } catch (const DatasetError& e) {
    return e.what();
  }
  return "";
}

TEST(Dataset, ParsesMsdLayout) {
  ScratchDir dir("ds-msd");
  test::makeMsdDataset(dir.path(), 3, 1);
  const Dataset dataset = loadDataset(dir.path());
  EXPECT_EQ(dataset.layout, DatasetLayout::MSD);
  EXPECT_EQ(dataset.name, "TinyTumour");
  EXPECT_EQ(dataset.description, "tiny test set");
  EXPECT_EQ(dataset.modalities, (std::vector<std::string>{"FLAIR", "T1w"}));
  EXPECT_EQ(dataset.labels, (std::map<int, std::string>{
                                {0, "background"}, {1, "edema"}, {2, "non-enhancing tumour"}, {3, "enhancing tumour"}}));
  ASSERT_EQ(dataset.training.size(), 3u);
  EXPECT_EQ(dataset.training[1].id, "case_001");
  ASSERT_EQ(dataset.training[1].images.size(), 1u);
  EXPECT_EQ(dataset.training[1].images[0], dir.path() / "imagesTr/case_001.nii.gz");
  EXPECT_EQ(dataset.training[1].label, dir.path() / "labelsTr/case_001.nii.gz");
  ASSERT_EQ(dataset.test.size(), 1u);
  EXPECT_EQ(dataset.test[0].id, "case_003");
  EXPECT_TRUE(dataset.test[0].label.empty());
  EXPECT_EQ(dataset.declaredNumTraining, 3);
  EXPECT_EQ(dataset.declaredNumTest, 1);
}

TEST(Dataset, LoadsMsdCaseImageAndLabels) {
  ScratchDir dir("ds-msd-load");
  test::makeMsdDataset(dir.path(), 1, 0);
  const Dataset dataset = loadDataset(dir.path());
  const ImageVolume image = loadCaseImage(dataset.training[0]);
  EXPECT_EQ(image.size, test::kTinySize);
  EXPECT_EQ(image.channels, 2);
  EXPECT_TRUE(image.geometry.sameAs(test::tinyGeometry()));
  EXPECT_EQ(image.data, test::tinyImage(0).data);
  const LabelVolume labels = loadCaseLabels(dataset.training[0]);
  EXPECT_EQ(labels.data, test::tinyLabels().data);
  EXPECT_THROW(loadCaseLabels(CaseEntry{"t", {dataset.training[0].images[0]}, {}}), DatasetError);
}

TEST(Dataset, ParsesNnUNetV2LayoutAndStacksChannels) {
  ScratchDir dir("ds-nnunet");
  test::makeNnUNetDataset(dir.path(), 2, 1);
  test::writeText(dir / "imagesTr/._case_000_0000.nii.gz", "macOS resource fork");  // ignored
  test::writeText(dir / "imagesTr/notes.txt", "not an image");                       // ignored
  const Dataset dataset = loadDataset(dir.path());
  EXPECT_EQ(dataset.layout, DatasetLayout::NnUNetV2);
  EXPECT_EQ(dataset.name, "TinyNnUNet");
  EXPECT_EQ(dataset.fileEnding, ".nii.gz");
  EXPECT_EQ(dataset.modalities, (std::vector<std::string>{"FLAIR", "T1w"}));
  EXPECT_EQ(dataset.labels,
            (std::map<int, std::string>{{0, "background"}, {1, "edema"}, {2, "non_enhancing"}, {3, "enhancing"}}));
  ASSERT_EQ(dataset.training.size(), 2u);
  EXPECT_EQ(dataset.training[0].id, "case_000");
  EXPECT_EQ(dataset.training[1].id, "case_001");
  EXPECT_EQ(dataset.training[1].images,
            (std::vector<fs::path>{dir / "imagesTr/case_001_0000.nii.gz", dir / "imagesTr/case_001_0001.nii.gz"}));
  EXPECT_EQ(dataset.training[1].label, dir / "labelsTr/case_001.nii.gz");
  ASSERT_EQ(dataset.test.size(), 1u);
  EXPECT_EQ(dataset.test[0].id, "case_002");
  EXPECT_TRUE(dataset.test[0].label.empty());

  const ImageVolume image = loadCaseImage(dataset.training[1]);
  EXPECT_EQ(image.channels, 2);
  EXPECT_EQ(image.data, test::tinyImage(1).data);
  EXPECT_TRUE(image.geometry.sameAs(test::tinyGeometry()));
}

TEST(Dataset, NnUNetCaseWithMissingChannelStillListsExpectedFile) {
  ScratchDir dir("ds-nnunet-missing");
  test::makeNnUNetDataset(dir.path(), 2, 0);
  fs::remove(test::nnunetChannelFile(dir.path(), "imagesTr", 1, 1));
  const Dataset dataset = loadDataset(dir.path());
  ASSERT_EQ(dataset.training.size(), 2u);
  EXPECT_EQ(dataset.training[1].images.back(), dir / "imagesTr/case_001_0001.nii.gz");
  EXPECT_ANY_THROW(loadCaseImage(dataset.training[1]));
}

TEST(Dataset, RefusesChannelsOnDifferentGrids) {
  ScratchDir dir("ds-nnunet-grid");
  test::makeNnUNetDataset(dir.path(), 2, 0);
  // case 0: channel 1 has a different size; case 1: a different spacing.
  writeImage(test::tinyImage(0, 1, {8, 8, 5}), test::nnunetChannelFile(dir.path(), "imagesTr", 0, 1));
  Geometry coarse = test::tinyGeometry();
  coarse.spacing = {1.5, 1.5, 3.0};
  writeImage(test::tinyImage(1, 1, test::kTinySize, coarse), test::nnunetChannelFile(dir.path(), "imagesTr", 1, 1));
  const Dataset dataset = loadDataset(dir.path());
  try {
    loadCaseImage(dataset.training[0]);
    FAIL() << "mismatched sizes accepted";
  } catch (const DatasetError& e) {
    EXPECT_NE(std::string(e.what()).find("case_000_0001.nii.gz is 8x8x5"), std::string::npos) << e.what();
  }
  try {
    loadCaseImage(dataset.training[1]);
    FAIL() << "mismatched spacing accepted";
  } catch (const DatasetError& e) {
    EXPECT_NE(std::string(e.what()).find("spacing"), std::string::npos) << e.what();
  }
}

TEST(Dataset, ParsesNnUNetRegions) {
  ScratchDir dir("ds-nnunet-regions");
  test::makeNnUNetDataset(dir.path(), 1, 0);
  json doc = json::parse(readTextFile(dir / "dataset.json"));
  doc["labels"] = {{"background", 0}, {"whole_tumor", {1, 2, 3}}, {"tumor_core", {2, 3}}, {"enhancing_tumor", 3}};
  test::writeText(dir / "dataset.json", doc.dump());
  EXPECT_NE(loadError(dir.path()).find("regions_class_order is required"), std::string::npos);
  doc["regions_class_order"] = {1, 2, 3};
  test::writeText(dir / "dataset.json", doc.dump());
  const Dataset dataset = loadDataset(dir.path());
  EXPECT_EQ(dataset.labels.size(), 4u);
  EXPECT_EQ(dataset.labels.at(3), "enhancing_tumor");
  EXPECT_EQ(dataset.regions.at("whole_tumor"), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(dataset.regions.size(), 2u);
}

TEST(Dataset, ResolveRefusesEscapes) {
  ScratchDir dir("ds-escape");
  ScratchDir outside("ds-escape-outside");
  test::writeText(outside / "secret.nii.gz", "x");
  fs::create_directories(dir / "a");
  fs::create_symlink(outside.path(), dir / "link");

  EXPECT_EQ(resolveInsideDataset(dir.path(), "./imagesTr/x.nii.gz"), dir / "imagesTr/x.nii.gz");
  EXPECT_EQ(resolveInsideDataset(dir.path(), "a/../imagesTr/x.nii.gz"), dir / "imagesTr/x.nii.gz");
  EXPECT_NE(resolveError(dir.path(), "../x").find("climbs above"), std::string::npos);
  EXPECT_NE(resolveError(dir.path(), "a/../../x").find("climbs above"), std::string::npos);
  EXPECT_NE(resolveError(dir.path(), "/etc/passwd").find("absolute"), std::string::npos);
  EXPECT_NE(resolveError(dir.path(), "link/secret.nii.gz").find("symbolic link"), std::string::npos);
  EXPECT_NE(resolveError(dir.path(), "").find("empty"), std::string::npos);
  EXPECT_NE(resolveError(dir.path(), ".").find("folder itself"), std::string::npos);
}

TEST(Dataset, LoadRefusesEscapingEntriesNamingThem) {
  ScratchDir dir("ds-escape-json");
  ScratchDir outside("ds-escape-json-outside");
  test::makeMsdDataset(dir.path(), 2, 0);
  json doc = test::msdDatasetJson(2, 0);
  doc["training"][1]["label"] = "../labels/case_001.nii.gz";
  test::writeText(dir / "dataset.json", doc.dump());
  EXPECT_NE(loadError(dir.path()).find("training[1].label"), std::string::npos) << loadError(dir.path());

  doc = test::msdDatasetJson(2, 0);
  doc["training"][0]["image"] = "/etc/passwd";
  test::writeText(dir / "dataset.json", doc.dump());
  EXPECT_NE(loadError(dir.path()).find("training[0].image"), std::string::npos);

  // A symbolic link planted inside the folder that points outside it.
  writeImage(test::tinyImage(0), outside / "case_000.nii.gz");
  fs::remove(dir / "imagesTr/case_000.nii.gz");
  fs::create_symlink(outside / "case_000.nii.gz", dir / "imagesTr/case_000.nii.gz");
  test::writeText(dir / "dataset.json", test::msdDatasetJson(2, 0).dump());
  const std::string message = loadError(dir.path());
  EXPECT_NE(message.find("training[0].image"), std::string::npos) << message;
  EXPECT_NE(message.find("symbolic link"), std::string::npos) << message;

  // nnU-Net layout: a discovered channel file that links outside.
  ScratchDir nn("ds-escape-nnunet");
  test::makeNnUNetDataset(nn.path(), 1, 0);
  fs::remove(test::nnunetChannelFile(nn.path(), "imagesTr", 0, 1));
  fs::create_symlink(outside / "case_000.nii.gz", test::nnunetChannelFile(nn.path(), "imagesTr", 0, 1));
  EXPECT_NE(loadError(nn.path()).find("symbolic link"), std::string::npos) << loadError(nn.path());
}

TEST(Dataset, MalformedJsonNamesLineAndField) {
  ScratchDir dir("ds-bad-json");
  EXPECT_NE(loadError(dir.path()).find("no dataset.json"), std::string::npos);

  test::writeText(dir / "dataset.json", "{\n  \"name\": \"x\",\n  \"labels\": {\"0\": \"bg\",,}\n}\n");
  EXPECT_NE(loadError(dir.path()).find("line 3"), std::string::npos) << loadError(dir.path());

  auto expectFieldError = [&](const json& doc, const std::string& expected) {
    test::writeText(dir / "dataset.json", doc.dump());
    const std::string message = loadError(dir.path());
    EXPECT_NE(message.find(expected), std::string::npos) << "got: " << message;
    EXPECT_EQ(message.rfind("dataset.json: ", 0), 0u) << message;
  };
  json doc = test::msdDatasetJson(3, 0);
  doc["training"][1]["label"] = 7;
  expectFieldError(doc, "training[1].label must be a string");

  doc = test::msdDatasetJson(3, 0);
  doc["training"][2].erase("image");
  expectFieldError(doc, "training[2].image");

  doc = test::msdDatasetJson(3, 0);
  doc["training"] = "all of them";
  expectFieldError(doc, "training must be an array");

  doc = test::msdDatasetJson(3, 0);
  doc.erase("training");
  expectFieldError(doc, "'training'");

  doc = test::msdDatasetJson(3, 0);
  doc["modality"] = {{"0", "FLAIR"}, {"2", "T1w"}};
  expectFieldError(doc, "channel 1 is missing");

  doc = test::msdDatasetJson(3, 0);
  doc["labels"] = {{"1", "edema"}, {"2", "core"}};
  expectFieldError(doc, "background value 0");

  doc = test::msdDatasetJson(3, 0);
  doc["labels"]["300"] = "too big";
  expectFieldError(doc, "labels key '300'");

  doc = test::msdDatasetJson(3, 0);
  doc["numTraining"] = "three";
  expectFieldError(doc, "numTraining must be an integer");

  doc = test::msdDatasetJson(3, 0);
  doc["name"] = 5;
  expectFieldError(doc, "name must be a string");

  doc = test::msdDatasetJson(3, 0);
  doc["training"][2] = doc["training"][0];
  expectFieldError(doc, "case 'case_000' more than once");

  expectFieldError(json::array({1, 2}), "top level must be an object");

  doc = {{"channel_names", {{"0", "FLAIR"}}}, {"labels", {{"background", 0}}}, {"numTraining", 0}};
  expectFieldError(doc, "'file_ending'");
}

TEST(Dataset, EmptyTrainingListLoads) {
  // Loading succeeds (the file is well formed); `dataset check` reports no-training-cases.
  ScratchDir dir("ds-empty");
  test::writeText(dir / "dataset.json", test::msdDatasetJson(0, 0).dump());
  const Dataset dataset = loadDataset(dir.path());
  EXPECT_TRUE(dataset.training.empty());
}

TEST(Dataset, WritesMsdDatasetJsonThatReadsBack) {
  ScratchDir dir("ds-write");
  test::makeMsdDataset(dir.path(), 2, 1);
  Dataset dataset = loadDataset(dir.path());
  fs::remove(dir / "dataset.json");
  writeMsdDatasetJson(dataset);
  const json written = json::parse(readTextFile(dir / "dataset.json"));
  EXPECT_EQ(written["training"][0]["image"], "./imagesTr/case_000.nii.gz");
  EXPECT_EQ(written["training"][1]["label"], "./labelsTr/case_001.nii.gz");
  EXPECT_EQ(written["test"][0], "./imagesTs/case_002.nii.gz");
  EXPECT_EQ(written["modality"]["1"], "T1w");
  EXPECT_EQ(written["labels"]["3"], "enhancing tumour");
  EXPECT_EQ(written["numTraining"], 2);

  const Dataset reread = loadDataset(dir.path());
  EXPECT_EQ(reread.name, dataset.name);
  EXPECT_EQ(reread.modalities, dataset.modalities);
  EXPECT_EQ(reread.labels, dataset.labels);
  ASSERT_EQ(reread.training.size(), 2u);
  EXPECT_EQ(reread.training[1].images, dataset.training[1].images);
  EXPECT_EQ(reread.training[1].label, dataset.training[1].label);

  // Relative paths (as a generator builds them) and absolute paths under root are both accepted.
  dataset.training[0].images = {"imagesTr/case_000.nii.gz"};
  dataset.training[1].images = {fs::absolute(dir / "imagesTr/case_001.nii.gz")};
  writeMsdDatasetJson(dataset);
  const json again = json::parse(readTextFile(dir / "dataset.json"));
  EXPECT_EQ(again["training"][0]["image"], "./imagesTr/case_000.nii.gz");
  EXPECT_EQ(again["training"][1]["image"], "./imagesTr/case_001.nii.gz");

  dataset.training[0].images = {"/elsewhere/case_000.nii.gz"};
  EXPECT_THROW(writeMsdDatasetJson(dataset), DatasetError);
  dataset.training[0].images = {"a.nii.gz", "b.nii.gz"};
  EXPECT_THROW(writeMsdDatasetJson(dataset), DatasetError);
  EXPECT_EQ(json::parse(readTextFile(dir / "dataset.json")), again);  // failed writes leave the file alone
}

TEST(Dataset, CaseIdFromFileName) {
  EXPECT_EQ(caseIdFromFileName("imagesTr/BRATS_001.nii.gz"), "BRATS_001");
  EXPECT_EQ(caseIdFromFileName("x/BRATS_001.nrrd", ".nii.gz"), "BRATS_001");
  EXPECT_EQ(caseIdFromFileName("x/case.1.mha", ".mha"), "case.1");
}

}  // namespace
}  // namespace medseg
