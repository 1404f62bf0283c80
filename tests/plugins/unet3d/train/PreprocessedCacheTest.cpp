#include "plugins/unet3d/train/PreprocessedCache.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "plugins/unet3d/train/CasePreparation.h"
#include "plugins/unet3d/train/TrainingPlan.h"
#include "support/TestSupport.h"
#include "support/TinyData.h"

namespace medseg {
namespace {
namespace fs = std::filesystem;

class PreprocessedCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::writeTinyDataset(scratch_ / "data", 3, 20);
    dataset_ = loadDataset(scratch_ / "data");
    config_ = test::tinyTrainConfig();
    config_.data = (scratch_ / "data").string();
    resolveWithDataset(config_, dataset_);
  }

  // Prepares every labelled case through the cache under `root`; returns the use and the tensors.
  std::pair<CacheUse, std::vector<PreprocessedTensors>> prepareAll(const std::optional<fs::path>& root,
                                                                   const TrainConfig& config) {
    CasePreparation preparation(dataset_, config, root, reporter_);
    std::vector<PreprocessedTensors> tensors;
    for (const auto& entry : dataset_.training) tensors.push_back(preparation.prepare(entry));
    return {preparation.cacheUse(), tensors};
  }

  static void expectSame(const std::vector<PreprocessedTensors>& a, const std::vector<PreprocessedTensors>& b) {
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_TRUE(torch::equal(a[i].image, b[i].image)) << "case " << i;
      EXPECT_TRUE(torch::equal(a[i].labels, b[i].labels)) << "case " << i;
      EXPECT_EQ(a[i].image.scalar_type(), torch::kFloat);
    }
  }

  test::ScratchDir scratch_{"preprocessed-cache"};
  Dataset dataset_;
  TrainConfig config_;
  Reporter reporter_{OutputMode::JsonLines};
};

TEST_F(PreprocessedCacheTest, BuiltOnceThenReadAndEqualToPreprocessingWithoutIt) {
  const fs::path root = scratch_ / "cache";
  const auto [first, built] = prepareAll(root, config_);
  EXPECT_EQ(first.built, 3);
  EXPECT_EQ(first.reused, 0);
  ASSERT_TRUE(first.folder);
  EXPECT_TRUE(fs::exists(*first.folder / "TINY_100.mspc"));
  const auto [second, read] = prepareAll(root, config_);  // the second build is a no-op
  EXPECT_EQ(second.built, 0);
  EXPECT_EQ(second.reused, 3);
  EXPECT_EQ(second.bytes, first.bytes);
  expectSame(built, read);
  const auto [off, uncached] = prepareAll(std::nullopt, config_);
  EXPECT_FALSE(off.folder);
  EXPECT_EQ(off.built, 3);
  expectSame(uncached, read);  // the same float16-rounded values with or without the cache
  // Compact: float16 image and uint8 labels, each voxel of the cropped grid once.
  const auto& c = read.front();
  EXPECT_LT(fs::file_size(*first.folder / "TINY_100.mspc"), static_cast<uintmax_t>(c.image.numel() * 2 + c.labels.numel() + 4096));
}

TEST_F(PreprocessedCacheTest, ChangedConfigOrSourceRebuilds) {
  const fs::path root = scratch_ / "cache";
  const auto [first, built] = prepareAll(root, config_);
  TrainConfig other = config_;
  other.preprocessing.zscoreOverBrain = false;
  const auto [changed, otherTensors] = prepareAll(root, other);
  EXPECT_EQ(changed.built, 3) << "another preprocessing has its own cache";
  EXPECT_NE(*changed.folder, *first.folder);
  // Rewrite one case's labels: that case, and only it, is rebuilt.
  auto tiny = test::makeTinyCase(1, 20);
  tiny.labels.at(10, 10, 10) = 0;
  writeLabels(tiny.labels, dataset_.training[1].label);
  fs::last_write_time(dataset_.training[1].label, fs::last_write_time(dataset_.training[1].label) + std::chrono::seconds(2));
  const auto [after, tensors] = prepareAll(root, config_);
  EXPECT_EQ(after.built, 1);
  EXPECT_EQ(after.reused, 2);
  EXPECT_FALSE(torch::equal(tensors[1].labels, built[1].labels)) << "the rebuilt case has the new labels";
  EXPECT_TRUE(torch::equal(tensors[0].labels, built[0].labels));
}

TEST_F(PreprocessedCacheTest, TruncatedOrDamagedFilesAreDetectedAndRebuilt) {
  const fs::path root = scratch_ / "cache";
  const auto [first, built] = prepareAll(root, config_);
  const PreprocessedCache cache(root, dataset_, config_.preprocessing);
  const fs::path truncated = cache.fileOf(dataset_.training[0]);
  fs::resize_file(truncated, fs::file_size(truncated) - 100);
  const CacheRead read = cache.read(dataset_.training[0]);
  EXPECT_EQ(read.status, CacheLookup::Damaged);
  EXPECT_NE(read.reason.find("truncated"), std::string::npos) << read.reason;
  {  // one flipped payload byte, same size
    const fs::path damaged = cache.fileOf(dataset_.training[2]);
    std::fstream file(damaged, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(fs::file_size(damaged) - 10));
    file.put('\x7f');
  }
  const CacheRead flipped = cache.read(dataset_.training[2]);
  EXPECT_EQ(flipped.status, CacheLookup::Damaged);
  EXPECT_NE(flipped.reason.find("checksum"), std::string::npos) << flipped.reason;
  const auto [after, tensors] = prepareAll(root, config_);
  EXPECT_EQ(after.built, 2);
  EXPECT_EQ(after.reused, 1);
  expectSame(built, tensors);
  EXPECT_EQ(cache.read(dataset_.training[0]).status, CacheLookup::Hit);
  // A file that is not a cache file at all.
  std::ofstream(truncated, std::ios::trunc) << "not a cache";
  EXPECT_EQ(cache.read(dataset_.training[0]).status, CacheLookup::Damaged);
}

TEST_F(PreprocessedCacheTest, UnwritableCacheIsReportedAndPreparationGoesOn) {
  std::ofstream(scratch_ / "a-file") << "x";  // a folder cannot be made below a regular file
  const auto [use, tensors] = prepareAll(scratch_ / "a-file" / "cache", config_);
  EXPECT_FALSE(use.writable);
  EXPECT_EQ(use.built, 3);
  const auto [off, uncached] = prepareAll(std::nullopt, config_);
  expectSame(uncached, tensors);
}

TEST_F(PreprocessedCacheTest, PlanTrainingUsesTheDataSetsCacheAndRecordsItsUse) {
  ::unsetenv("MEDSEG_PREPROCESSED");
  const PlannedTraining first = planTraining(config_, reporter_, false);
  EXPECT_EQ(first.plan.cache.built, 3);
  ASSERT_TRUE(first.plan.cache.folder);
  EXPECT_EQ(first.plan.cache.folder->parent_path(), scratch_ / "data" / ".medseg-preprocessed");
  const PlannedTraining second = planTraining(config_, reporter_, false);
  EXPECT_EQ(second.plan.cache.reused, 3);
  EXPECT_EQ(second.plan.toJson()["preprocessed_cache"]["reused"], 3);
  ASSERT_EQ(first.data.train->size(), second.data.train->size());
  for (size_t i = 0; i < first.data.train->size(); ++i)
    EXPECT_TRUE(torch::equal((*first.data.train)[i].image, (*second.data.train)[i].image));
  ::setenv("MEDSEG_PREPROCESSED", "off", 1);
  const PlannedTraining off = planTraining(config_, reporter_, false);
  ::unsetenv("MEDSEG_PREPROCESSED");
  EXPECT_FALSE(off.plan.cache.folder);
  EXPECT_EQ(off.plan.cache.built, 3);
}

}  // namespace
}  // namespace medseg
