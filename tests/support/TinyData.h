#pragma once
// Tiny in-memory and on-disk data for the training tests: a bright spherical "tumour" (labels 3 inside
// 2 inside 1) in an ellipsoidal "brain" of a two-channel image.
#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <utility>

#include "core/dataset/Dataset.h"
#include "core/io/ImageIO.h"
#include "plugins/unet3d/train/TrainConfig.h"

namespace medseg::test {

struct TinyCase {
  ImageVolume image;
  LabelVolume labels;
};

inline TinyCase makeTinyCase(int index, int64_t edge = 24) {
  std::mt19937 rng(static_cast<unsigned>(1000 + index));
  std::uniform_real_distribution<double> centre(-0.2, 0.2), noise(-0.1, 0.1);
  const double cx = edge / 2.0 + centre(rng) * edge, cy = edge / 2.0 + centre(rng) * edge, cz = edge / 2.0 + centre(rng) * edge;
  const double radius = edge * (0.16 + 0.05 * (index % 3));
  TinyCase c{ImageVolume({edge, edge, edge}, 2), LabelVolume({edge, edge, edge}, 1)};
  for (int64_t z = 0; z < edge; ++z)
    for (int64_t y = 0; y < edge; ++y)
      for (int64_t x = 0; x < edge; ++x) {
        const double bx = (x - edge / 2.0) / (edge * 0.45), by = (y - edge / 2.0) / (edge * 0.45),
                     bz = (z - edge / 2.0) / (edge * 0.45);
        if (bx * bx + by * by + bz * bz > 1.0) continue;  // outside the brain: zeros
        const double r = std::sqrt((x - cx) * (x - cx) + (y - cy) * (y - cy) + (z - cz) * (z - cz));
        uint8_t label = 0;
        if (r < radius * 0.4) label = 3;
        else if (r < radius * 0.7) label = 2;
        else if (r < radius) label = 1;
        c.labels.at(x, y, z) = label;
        c.image.at(x, y, z, 0) = static_cast<float>(1.0 + (label ? 1.5 + 0.3 * label : 0.0) + noise(rng));
        c.image.at(x, y, z, 1) = static_cast<float>(1.0 + (label == 3 ? 1.0 : 0.0) + noise(rng));
      }
  return c;
}

// An MSD data set of `cases` tiny cases under `root`.
inline void writeTinyDataset(const std::filesystem::path& root, int cases, int64_t edge = 24) {
  std::filesystem::create_directories(root / "imagesTr");
  std::filesystem::create_directories(root / "labelsTr");
  Dataset dataset;
  dataset.root = root;
  dataset.name = "tiny";
  dataset.modalities = {"FLAIR", "T1gd"};
  dataset.labels = {{0, "background"}, {1, "edema"}, {2, "non-enhancing tumour"}, {3, "enhancing tumour"}};
  for (int i = 0; i < cases; ++i) {
    const auto c = makeTinyCase(i, edge);
    const std::string id = "TINY_" + std::to_string(100 + i);
    CaseEntry entry{id, {root / "imagesTr" / (id + ".nii.gz")}, root / "labelsTr" / (id + ".nii.gz")};
    writeImage(c.image, entry.images.front());
    writeLabels(c.labels, entry.label);
    dataset.training.push_back(entry);
  }
  writeMsdDatasetJson(dataset);
}

// What training would derive from the tiny data set: two input channels, the three BraTS regions.
inline TrainConfig resolvedForTinyData(TrainConfig c) {
  c.network.inChannels = 2;
  c.network.outChannels = 3;
  c.inChannelsSet = c.outChannelsSet = true;
  c.regions = {{"WT", {1, 2, 3}}, {"TC", {2, 3}}, {"ET", {3}}};
  c.classNames = {"WT", "TC", "ET"};
  return c;
}

// A resolved config for tiny, fast runs (no data set needed).
inline TrainConfig tinyTrainConfig() {
  TrainConfig c = TrainConfig::fromJson({{"seed", 3},
                                         {"threads", 1},
                                         {"targets", "regions"},
                                         {"patch_size", {16, 16, 16}},
                                         {"batch_size", 2},
                                         {"epochs", 2},
                                         {"steps_per_epoch", 3},
                                         {"network", {{"depth", 2}, {"base_filters", 4}, {"deep_supervision", false}}},
                                         {"optimizer", {{"name", "adam"}, {"lr", 0.003}}},
                                         {"validation", {{"cases", 2}}},
                                         {"loader", {{"workers", 2}, {"prefetch", 2}}}});
  return resolvedForTinyData(std::move(c));
}

}  // namespace medseg::test
