// dataset.json text parsed without a file (datasetFromJson) gives what loadDataset gives for the same
// text on disk, and the file reader refuses what never ends (a link to /dev/zero) instead of reading it.
#include <gtest/gtest.h>

#include "core/dataset/Dataset.h"
#include "core/dataset/TinyDatasets.h"
#include "core/util/AtomicFile.h"
#include "support/TestSupport.h"

namespace medseg {
namespace {
namespace fs = std::filesystem;

TEST(DatasetFromJson, SameResultAsLoadingTheFile) {
  test::ScratchDir dir("dataset-from-json");
  test::makeMsdDataset(dir.path(), 3, 1);
  const Dataset fromFile = loadDataset(dir.path());
  const Dataset fromText = datasetFromJson(readTextFile(dir / "dataset.json"), dir.path());
  ASSERT_EQ(fromText.training.size(), fromFile.training.size());
  for (size_t i = 0; i < fromFile.training.size(); ++i) {
    EXPECT_EQ(fromText.training[i].id, fromFile.training[i].id);
    EXPECT_EQ(fromText.training[i].images, fromFile.training[i].images);
    EXPECT_EQ(fromText.training[i].label, fromFile.training[i].label);
  }
  EXPECT_EQ(fromText.test.size(), 1u);
  EXPECT_EQ(fromText.modalities, fromFile.modalities);
  EXPECT_EQ(fromText.labels, fromFile.labels);
  try {
    datasetFromJson("{\n  \"name\": 1,,\n}", dir.path());
    FAIL();
  } catch (const DatasetError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find((dir / "dataset.json").string()), std::string::npos) << message;
    EXPECT_NE(message.find("line 2"), std::string::npos) << message;
  }
}

TEST(DatasetFromJson, FilesThatNeverEndAreRefused) {
  test::ScratchDir dir("dataset-dev-zero");
  fs::create_symlink("/dev/zero", dir / "dataset.json");
  try {
    loadDataset(dir.path());
    FAIL();
  } catch (const DatasetError& error) {
    EXPECT_NE(std::string(error.what()).find("holds more than"), std::string::npos) << error.what();
  }
  EXPECT_THROW(readTextFile("/dev/zero", 1000), std::runtime_error);
  EXPECT_EQ(readTextFile("/dev/null", 10), "");
}

}  // namespace
}  // namespace medseg
