#pragma once
// What a segmentation network takes and gives, as the model files that carry it write it (a
// MedSeg checkpoint's description, the JSON sidecar of a TorchScript model): the input channels in
// order, the fixed preprocessing the input must have had, the training patch (the default window),
// and how its outputs are read (softmax over labels, or sigmoid regions and the labels each covers).
// LibTorch plugins share it; a MedSeg checkpoint's ModelDescription adds its U-Net's layout.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/nn/Preprocessing.h"

namespace medseg {

enum class TargetMode { Labels, Regions };  // labels 0..K-1 (softmax), or BraTS-like regions (sigmoid)

const char* targetModeName(TargetMode mode);          // "labels" / "regions"
TargetMode parseTargetMode(const std::string& name);  // throws InputError for anything else

struct ModelIO {
  PreprocessingConfig preprocessing;
  TargetMode targets = TargetMode::Labels;
  std::vector<std::string> classNames;        // output channel names
  std::vector<int64_t> patchSize{96, 96, 96};  // training patch (z, y, x); default inference window
  std::vector<std::string> modalities;         // expected input channels, in order
  // Regions mode: the label values each output channel covers (BraTS: WT {1,2,3}, TC {2,3}, ET {3}),
  // so inference can turn region masks back into labels. Empty in labels mode.
  std::vector<std::vector<int>> regionLabels;
  // Optional "series_patterns": per modality, case-insensitive regular expressions that pick its
  // series from a study by SeriesDescription (core/pacs/SeriesModalityRule.h), e.g.
  // {"T1gd": ["t1.*(gd|gad|ce|post|contrast)"]}. Keys must be modalities of the model (when it names
  // them) and every pattern a valid ECMAScript regex (InputError otherwise). Written only when set.
  std::map<std::string, std::vector<std::string>> seriesPatterns;

  // {"preprocessing", "targets", "class_names", "region_labels", "patch_size", "modalities"
  //  [, "series_patterns"]}
  nlohmann::json toJson() const;
  // Missing keys keep their defaults; InputError naming the field for a wrong type or value.
  static ModelIO fromJson(const nlohmann::json& json);
};

// Names of the label values a mask of this model can hold (1..), for label tables and volumes:
// labels mode, the class names of outputs 1..outputs-1 ("label_<v>" where unnamed); regions mode, the
// BraTS names of the labels the regions cover.
std::map<int, std::string> maskLabelNames(const ModelIO& io, int64_t outputs);

}  // namespace medseg
