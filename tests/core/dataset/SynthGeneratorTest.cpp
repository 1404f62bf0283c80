// The synthetic BraTS-like generator: determinism, label nesting, appearance, the phantom fallback and
// the data set it writes.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "core/dataset/Dataset.h"
#include "core/dataset/SynthAnatomy.h"
#include "core/dataset/SynthGenerator.h"
#include "core/dataset/SynthRandom.h"
#include "core/io/ImageIO.h"
#include "core/util/Interrupt.h"
#include "support/TestSupport.h"
#include "support/MissingComponent.h"

namespace medseg {
namespace {
namespace fs = std::filesystem;
using test::ScratchDir;

SynthOptions smallOptions(int64_t side = 48, uint64_t seed = 1) {
  SynthOptions options;
  options.size = {side, side, side};
  options.seed = seed;
  options.templateDir = test::templateDir();
  return options;
}

bool templatePresent() { return synth::templateAvailable(test::templateDir()); }

// Every label-2 voxel touches only labels 2 and 3; every label-3 voxel never touches 0 (6-neighbours).
void expectNested(const LabelVolume& labels, const std::string& what) {
  int64_t coreLeaks = 0, rimLeaks = 0;
  const auto& n = labels.size;
  for (int64_t z = 0; z < n[2]; ++z)
    for (int64_t y = 0; y < n[1]; ++y)
      for (int64_t x = 0; x < n[0]; ++x) {
        const uint8_t v = labels.at(x, y, z);
        if (v != 2 && v != 3) continue;
        const int64_t p[3] = {x, y, z};
        for (int axis = 0; axis < 3; ++axis)
          for (int step : {-1, 1}) {
            int64_t q[3] = {p[0], p[1], p[2]};
            q[axis] += step;
            const uint8_t w = labels.contains(q[0], q[1], q[2]) ? labels.at(q[0], q[1], q[2]) : 0;
            if (v == 2 && (w == 0 || w == 1)) ++coreLeaks;
            if (v == 3 && w == 0) ++rimLeaks;
          }
      }
  EXPECT_EQ(coreLeaks, 0) << what << ": core (2) voxels touching edema or background";
  EXPECT_EQ(rimLeaks, 0) << what << ": enhancing (3) voxels touching background";
}

std::array<int64_t, 4> labelCounts(const LabelVolume& labels) {
  std::array<int64_t, 4> counts{0, 0, 0, 0};
  for (uint8_t v : labels.data) ++counts.at(v);
  return counts;
}

// Mean of one channel over voxels where `select(label, tissue)` holds.
template <typename Select>
double meanWhere(const SynthCase& c, int channel, Select select) {
  double sum = 0;
  int64_t count = 0;
  const float* values = c.image.channel(channel);
  for (size_t i = 0; i < c.labels.data.size(); ++i)
    if (select(c.labels.data[i], c.tissue.data[i])) {
      sum += values[i];
      ++count;
    }
  return count ? sum / static_cast<double>(count) : 0.0;
}

TEST(SynthRandom, DeterministicAndRoughlyUniformAndNormal) {
  synth::Random a(42), b(42), c(43);
  EXPECT_EQ(a.next(), b.next());
  EXPECT_NE(a.next(), c.next());
  synth::Random r(7);
  double sum = 0, sumNormal = 0, sumSquares = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double u = r.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    const double g = r.normal();
    sumNormal += g;
    sumSquares += g * g;
  }
  EXPECT_NEAR(sum / n, 0.5, 0.01);
  EXPECT_NEAR(sumNormal / n, 0.0, 0.01);
  EXPECT_NEAR(sumSquares / n, 1.0, 0.02);
  EXPECT_NE(synth::caseKey(1, 0), synth::caseKey(1, 1));
  EXPECT_NE(synth::caseKey(1, 0), synth::caseKey(2, 0));
}

TEST(SynthAnatomy, TemplateTissueClassesAreOrderedAndPlausible) {
  if (!templatePresent()) MEDSEG_MISSING_COMPONENT("the Colin27 template is not in " + test::templateDir().string() + " (Debian package mricron-data)");
  const auto anatomy = synth::loadSynthAnatomy(test::templateDir(), false);
  ASSERT_TRUE(anatomy->fromTemplate);
  EXPECT_EQ(anatomy->t1.size, (Size3{181, 217, 181}));
  EXPECT_LT(anatomy->tissueMeans[0], anatomy->tissueMeans[1]);
  EXPECT_LT(anatomy->tissueMeans[1], anatomy->tissueMeans[2]);
  std::array<int64_t, 4> counts{0, 0, 0, 0};
  for (uint8_t v : anatomy->tissue.data) ++counts.at(v);
  const double brainMl = static_cast<double>(counts[1] + counts[2] + counts[3]) / 1000.0;  // 1 mm voxels
  EXPECT_GT(brainMl, 1000.0);
  EXPECT_LT(brainMl, 2200.0);
  // Grey and white matter dominate; CSF inside the brain mask is the smaller class.
  EXPECT_GT(counts[2], counts[1]);
  EXPECT_GT(counts[3], counts[1]);
  // Cached: the same object on a second request.
  EXPECT_EQ(anatomy.get(), synth::loadSynthAnatomy(test::templateDir(), false).get());
}

TEST(SynthGenerator, SameSeedSameVoxelsOtherSeedOrCaseDiffers) {
  const SynthOptions options = smallOptions(48, 5);
  const SynthCase first = synthesizeCase(options, 2);
  const SynthCase again = synthesizeCase(options, 2);
  EXPECT_EQ(first.image.data, again.image.data);
  EXPECT_EQ(first.labels.data, again.labels.data);
  EXPECT_EQ(first.image.channels, 4);
  EXPECT_EQ(first.image.size, (Size3{48, 48, 48}));
  EXPECT_TRUE(first.image.geometry.sameAs(first.labels.geometry));

  const SynthCase otherSeed = synthesizeCase(smallOptions(48, 6), 2);
  EXPECT_NE(first.image.data, otherSeed.image.data);
  EXPECT_NE(first.labels.data, otherSeed.labels.data);
  const SynthCase otherCase = synthesizeCase(options, 3);
  EXPECT_NE(first.labels.data, otherCase.labels.data);
}

TEST(SynthGenerator, GridKeepsTheBratsFieldOfView) {
  SynthOptions options = smallOptions(96);
  const Geometry g = synthGeometry(options);
  EXPECT_NEAR(g.spacing[0] * 96, 240.0, 1e-6);
  EXPECT_NEAR(g.spacing[1] * 96, 240.0, 1e-6);
  EXPECT_GE(g.spacing[2] * 96, 155.0 - 1e-6);
  options.size = {240, 240, 155};
  const Geometry full = synthGeometry(options);
  EXPECT_NEAR(full.spacing[0], 1.0, 1e-9);
  EXPECT_NEAR(full.spacing[1], 1.0, 1e-9);
  EXPECT_NEAR(full.spacing[2], 1.0, 0.05);
}

TEST(SynthGenerator, LabelsNestedPresentAndInsideTheBrain) {
  for (int64_t side : {48, 64}) {
    const SynthOptions options = smallOptions(side, 11);
    for (int index = 0; index < 6; ++index) {
      const SynthCase c = synthesizeCase(options, index);
      const std::string what = "case " + std::to_string(index) + " at " + std::to_string(side) + "^3";
      const auto counts = labelCounts(c.labels);
      EXPECT_GE(counts[1], 60) << what;
      EXPECT_GE(counts[2], 30) << what;
      EXPECT_GE(counts[3], 30) << what;
      // The whole tumour is a minority of the brain.
      int64_t brain = 0;
      for (uint8_t t : c.tissue.data) brain += t != 0;
      EXPECT_LT(counts[1] + counts[2] + counts[3], brain / 3) << what;
      expectNested(c.labels, what);
      int64_t tumourOutsideBrain = 0, backgroundNotZero = 0, brainZero = 0;
      for (size_t i = 0; i < c.labels.data.size(); ++i) {
        if (c.labels.data[i] != 0 && c.tissue.data[i] == 0) ++tumourOutsideBrain;
        for (int ch = 0; ch < 4; ++ch) {
          const float v = c.image.channel(ch)[i];
          ASSERT_TRUE(std::isfinite(v));
          if (c.tissue.data[i] == 0 && v != 0.0f) ++backgroundNotZero;
          if (c.tissue.data[i] != 0 && v <= 0.0f) ++brainZero;
        }
      }
      EXPECT_EQ(tumourOutsideBrain, 0) << what;
      EXPECT_EQ(backgroundNotZero, 0) << what;
      EXPECT_EQ(brainZero, 0) << what;
      // Skull-stripped look: the grid border is background, and the brain fills a good part of it.
      EXPECT_EQ(c.tissue.at(0, 0, 0), 0) << what;
      const double brainFraction = static_cast<double>(brain) / static_cast<double>(c.tissue.data.size());
      EXPECT_GT(brainFraction, 0.1) << what;  // BraTS: about 15%
      EXPECT_LT(brainFraction, 0.7) << what;
    }
  }
}

TEST(SynthGenerator, AppearanceFollowsBrats) {
  const SynthOptions options = smallOptions(64, 3);
  for (int index = 0; index < 3; ++index) {
    const SynthCase c = synthesizeCase(options, index);
    auto normal = [](uint8_t label, uint8_t tissue) { return label == 0 && tissue != 0; };
    auto label = [](uint8_t value) { return [value](uint8_t l, uint8_t) { return l == value; }; };
    auto tissue = [](uint8_t value) { return [value](uint8_t l, uint8_t t) { return l == 0 && t == value; }; };
    const int flair = 0, t1 = 1, t1gd = 2, t2 = 3;
    EXPECT_GT(meanWhere(c, flair, label(1)), 1.3 * meanWhere(c, flair, normal));
    EXPECT_GT(meanWhere(c, t2, label(1)), meanWhere(c, t2, normal));
    EXPECT_GT(meanWhere(c, t1gd, label(3)), 1.5 * meanWhere(c, t1gd, normal));
    EXPECT_LT(meanWhere(c, t1gd, label(2)), meanWhere(c, t1gd, label(3)));
    EXPECT_LT(meanWhere(c, t1, label(2)), meanWhere(c, t1, normal));
    EXPECT_GT(meanWhere(c, t2, label(2)), meanWhere(c, t2, normal));
    // Normal tissue: WM brighter than GM on T1, darker on T2; CSF dark on FLAIR and T1, bright on T2.
    EXPECT_GT(meanWhere(c, t1, tissue(3)), meanWhere(c, t1, tissue(2)));
    EXPECT_LT(meanWhere(c, t2, tissue(3)), meanWhere(c, t2, tissue(2)));
    EXPECT_LT(meanWhere(c, flair, tissue(1)), meanWhere(c, flair, tissue(2)));
    EXPECT_LT(meanWhere(c, t1, tissue(1)), meanWhere(c, t1, tissue(2)));
    EXPECT_GT(meanWhere(c, t2, tissue(1)), meanWhere(c, t2, tissue(2)));
    // Arbitrary units in a realistic range.
    for (float v : c.image.data) ASSERT_LT(v, 3000.0f);
  }
}

TEST(SynthGenerator, PhantomWhenTheTemplateIsMissing) {
  ScratchDir empty("synth-no-template");
  SynthOptions options = smallOptions(48, 2);
  options.templateDir = empty.path();
  const SynthCase c = synthesizeCase(options, 0);
  const auto counts = labelCounts(c.labels);
  EXPECT_GT(counts[1], 0);
  EXPECT_GT(counts[2], 0);
  EXPECT_GT(counts[3], 0);
  expectNested(c.labels, "phantom case");

  ScratchDir out("synth-phantom-out");
  options.outputDir = out / "data";
  options.cases = 1;
  Reporter quiet(OutputMode::JsonLines);
  testing::internal::CaptureStdout();
  const SynthSummary summary = generateSynthDataset(options, quiet);
  const std::string log = testing::internal::GetCapturedStdout();
  EXPECT_FALSE(summary.usedTemplate);
  EXPECT_EQ(summary.source, "procedural phantom");
  EXPECT_NE(log.find("procedural head phantom"), std::string::npos) << log;
  const Dataset dataset = loadDataset(options.outputDir);
  EXPECT_NE(dataset.description.find("phantom"), std::string::npos);
}

TEST(SynthGenerator, WritesAnMsdDatasetIndependentOfThreads) {
  ScratchDir dir("synth-dataset");
  SynthOptions options = smallOptions(48, 9);
  options.cases = 3;
  options.testCases = 1;
  Reporter quiet(OutputMode::JsonLines);
  testing::internal::CaptureStdout();
  options.outputDir = dir / "one";
  options.threads = 1;
  const SynthSummary one = generateSynthDataset(options, quiet);
  options.outputDir = dir / "two";
  options.threads = 2;
  const SynthSummary two = generateSynthDataset(options, quiet);
  testing::internal::GetCapturedStdout();
  EXPECT_EQ(one.cases, 3);
  EXPECT_EQ(one.testCases, 1);
  EXPECT_EQ(one.usedTemplate, templatePresent());
  EXPECT_EQ(one.meanLabelVoxels, two.meanLabelVoxels);
  for (int label = 1; label < 4; ++label) EXPECT_GT(one.meanLabelVoxels[label], 0.0);

  const Dataset a = loadDataset(dir / "one");
  const Dataset b = loadDataset(dir / "two");
  EXPECT_EQ(a.name, "BRATS");
  EXPECT_EQ(a.modalities, (std::vector<std::string>{"FLAIR", "T1w", "t1gd", "T2w"}));
  EXPECT_EQ(a.labels.at(0), "background");
  EXPECT_EQ(a.labels.at(1), "edema");
  EXPECT_EQ(a.labels.at(2), "non-enhancing tumour");
  EXPECT_EQ(a.labels.at(3), "enhancing tumour");
  EXPECT_NE(a.description.find("seed 9"), std::string::npos) << a.description;
  ASSERT_EQ(a.training.size(), 3u);
  ASSERT_EQ(a.test.size(), 1u);
  EXPECT_EQ(a.training[0].id, "BRATS_001");
  EXPECT_EQ(a.test[0].id, "BRATS_004");
  EXPECT_TRUE(fs::exists(dir / "one/imagesTs/BRATS_004.nii.gz"));
  const ImageHeader header = readImageHeader(a.training[0].images.front());
  EXPECT_EQ(header.channels, 4);
  EXPECT_EQ(header.componentType, "float32");
  for (size_t i = 0; i < a.training.size(); ++i) {
    const ImageVolume imageA = loadCaseImage(a.training[i]);
    const ImageVolume imageB = loadCaseImage(b.training[i]);
    EXPECT_EQ(imageA.data, imageB.data) << a.training[i].id;
    EXPECT_EQ(loadCaseLabels(a.training[i]).data, loadCaseLabels(b.training[i]).data) << a.training[i].id;
  }
  // What was written is exactly what synthesizeCase makes in memory.
  const SynthCase second = synthesizeCase(options, 1);
  EXPECT_EQ(loadCaseImage(a.training[1]).data, second.image.data);
  EXPECT_EQ(loadCaseLabels(a.training[1]).data, second.labels.data);
  EXPECT_TRUE(loadCaseImage(a.training[1]).geometry.sameAs(second.image.geometry));
}

TEST(SynthGenerator, RefusesForeignFoldersAndReplacesItsOwnOutput) {
  ScratchDir dir("synth-folders");
  SynthOptions options = smallOptions(32, 4);
  options.cases = 1;
  Reporter quiet(OutputMode::JsonLines);
  testing::internal::CaptureStdout();
  options.outputDir = dir / "foreign";
  fs::create_directories(options.outputDir);
  std::ofstream(options.outputDir / "notes.txt") << "mine";
  EXPECT_THROW(generateSynthDataset(options, quiet), InputError);
  EXPECT_FALSE(fs::exists(options.outputDir / "imagesTr"));

  testing::internal::GetCapturedStdout();

  options.outputDir = dir / "own";
  options.cases = 2;
  testing::internal::CaptureStdout();
  generateSynthDataset(options, quiet);
  testing::internal::GetCapturedStdout();
  std::ofstream(options.outputDir / "notes.txt") << "kept";
  options.seed = 5;
  options.cases = 1;
  testing::internal::CaptureStdout();
  generateSynthDataset(options, quiet);  // an earlier synthetic data set may be regenerated
  const std::string log = testing::internal::GetCapturedStdout();
  EXPECT_TRUE(fs::exists(options.outputDir / "notes.txt"));
  EXPECT_TRUE(fs::exists(options.outputDir / "labelsTr/BRATS_002.nii.gz"));  // never deleted...
  EXPECT_NE(log.find("not part of this data set"), std::string::npos) << log;  // ...but reported
  const Dataset rewritten = loadDataset(options.outputDir);
  EXPECT_NE(rewritten.description.find("seed 5"), std::string::npos);
  EXPECT_EQ(rewritten.training.size(), 1u);
}

TEST(SynthGenerator, RejectsOptionsNoDatasetCanBeMadeFrom) {
  ScratchDir dir("synth-options");
  Reporter quiet(OutputMode::JsonLines);
  SynthOptions options = smallOptions(48);
  options.outputDir = dir / "out";
  options.cases = 0;
  EXPECT_THROW(generateSynthDataset(options, quiet), InputError);
  options.cases = 1;
  options.testCases = -1;
  EXPECT_THROW(generateSynthDataset(options, quiet), InputError);
  options.testCases = 0;
  options.size = {8, 48, 48};
  EXPECT_THROW(generateSynthDataset(options, quiet), InputError);
  EXPECT_THROW(synthesizeCase(options, 0), InputError);
  options.size = {48, 48, 48};
  EXPECT_THROW(synthesizeCase(options, -1), InputError);
  EXPECT_FALSE(fs::exists(dir / "out"));
}

}  // namespace
}  // namespace medseg
