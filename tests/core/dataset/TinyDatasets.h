#pragma once
// Tiny data sets on disk for the data-set and CLI tests: 8x8x6 voxels, 2 channels (FLAIR, T1w),
// labels 0..3, in the MSD layout (one 4-D file per case) or the nnU-Net v2 layout (one file per
// channel). dataset.json is written by hand, as a person or another tool would.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/io/ImageIO.h"
#include "core/io/Volume.h"

namespace medseg::test {

inline Geometry tinyGeometry() {
  Geometry g;
  g.spacing = {1.5, 1.5, 2.0};
  g.origin = {-6.0, -6.0, 3.0};
  return g;
}

inline constexpr Size3 kTinySize{8, 8, 6};

// Deterministic, distinct per case and channel, never constant.
inline ImageVolume tinyImage(int caseIndex, int64_t channels = 2, Size3 size = kTinySize,
                             const Geometry& geometry = tinyGeometry()) {
  ImageVolume image(size, channels, geometry);
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t z = 0; z < size[2]; ++z)
      for (int64_t y = 0; y < size[1]; ++y)
        for (int64_t x = 0; x < size[0]; ++x)
          image.at(x, y, z, c) = static_cast<float>(100 * c + 10 * caseIndex + x + 2 * y + 3 * z);
  return image;
}

// A cube of edema around a core of 2 with an enhancing 3 voxel: every declared label occurs.
inline LabelVolume tinyLabels(Size3 size = kTinySize, const Geometry& geometry = tinyGeometry()) {
  LabelVolume labels(size, 1, geometry);
  for (int64_t z = 1; z < 5 && z < size[2]; ++z)
    for (int64_t y = 2; y < 6 && y < size[1]; ++y)
      for (int64_t x = 2; x < 6 && x < size[0]; ++x) labels.at(x, y, z) = 1;
  labels.at(3, 3, 2) = 2;
  labels.at(4, 3, 2) = 2;
  labels.at(3, 4, 2) = 3;
  return labels;
}

inline void writeText(const std::filesystem::path& file, const std::string& text) {
  std::filesystem::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << text;
}

inline std::string caseName(int index) {
  char name[32];
  std::snprintf(name, sizeof name, "case_%03d", index);
  return name;
}

inline nlohmann::json msdDatasetJson(int cases, int testCases) {
  nlohmann::json doc = {{"name", "TinyTumour"},
                        {"description", "tiny test set"},
                        {"tensorImageSize", "4D"},
                        {"modality", {{"0", "FLAIR"}, {"1", "T1w"}}},
                        {"labels", {{"0", "background"}, {"1", "edema"}, {"2", "non-enhancing tumour"}, {"3", "enhancing tumour"}}},
                        {"numTraining", cases},
                        {"numTest", testCases},
                        {"training", nlohmann::json::array()},
                        {"test", nlohmann::json::array()}};
  for (int i = 0; i < cases; ++i)
    doc["training"].push_back({{"image", "./imagesTr/" + caseName(i) + ".nii.gz"},
                               {"label", "./labelsTr/" + caseName(i) + ".nii.gz"}});
  for (int i = 0; i < testCases; ++i) doc["test"].push_back("./imagesTs/" + caseName(cases + i) + ".nii.gz");
  return doc;
}

// root/dataset.json, imagesTr/case_00i.nii.gz (8x8x6x2), labelsTr/case_00i.nii.gz, imagesTs/...
inline void makeMsdDataset(const std::filesystem::path& root, int cases = 3, int testCases = 1) {
  for (int i = 0; i < cases; ++i) {
    writeImage(tinyImage(i), root / "imagesTr" / (caseName(i) + ".nii.gz"));
    writeLabels(tinyLabels(), root / "labelsTr" / (caseName(i) + ".nii.gz"));
  }
  for (int i = 0; i < testCases; ++i)
    writeImage(tinyImage(cases + i), root / "imagesTs" / (caseName(cases + i) + ".nii.gz"));
  writeText(root / "dataset.json", msdDatasetJson(cases, testCases).dump(4));
}

inline std::filesystem::path nnunetChannelFile(const std::filesystem::path& root, const std::string& folder,
                                               int caseIndex, int channel) {
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "_%04d.nii.gz", channel);
  return root / folder / (caseName(caseIndex) + suffix);
}

// nnU-Net v2: imagesTr/case_00i_000c.nii.gz, labelsTr/case_00i.nii.gz, labels by name.
inline void makeNnUNetDataset(const std::filesystem::path& root, int cases = 2, int testCases = 1) {
  for (int i = 0; i < cases + testCases; ++i) {
    const ImageVolume image = tinyImage(i);
    const std::string folder = i < cases ? "imagesTr" : "imagesTs";
    for (int c = 0; c < 2; ++c) writeImage(extractChannel(image, c), nnunetChannelFile(root, folder, i, c));
    if (i < cases) writeLabels(tinyLabels(), root / "labelsTr" / (caseName(i) + ".nii.gz"));
  }
  const nlohmann::json doc = {{"name", "TinyNnUNet"},
                              {"channel_names", {{"0", "FLAIR"}, {"1", "T1w"}}},
                              {"labels", {{"background", 0}, {"edema", 1}, {"non_enhancing", 2}, {"enhancing", 3}}},
                              {"numTraining", cases},
                              {"file_ending", ".nii.gz"}};
  writeText(root / "dataset.json", doc.dump(4));
}

}  // namespace medseg::test
