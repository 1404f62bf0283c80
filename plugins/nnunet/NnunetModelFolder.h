#pragma once
// An nnU-Net v2 trained-model folder as nnU-Net writes it (nnUNet_results/DatasetXXX/<trainer>__<plans>__
// <configuration>/): dataset.json (channels, labels or regions, regions_class_order), plans.json (one
// entry per configuration: patch size, target spacing, normalisation, resampling, the network's
// architecture; `inherits_from` resolved as nnU-Net resolves it; the pre-2.4 plans format converted as
// nnU-Net converts it) and fold_N/checkpoint_final.pth (or checkpoint_best.pth). Read without touching
// the checkpoints; whatever a trained nnU-Net model needs that MedSeg does not do is refused here, by
// name, before anything heavy runs.
#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plugins/nnunet/NnunetResampling.h"

namespace medseg::nnunet {

// What the network's output channels mean (nnU-Net's LabelManager).
struct NnunetLabels {
  bool regionBased = false;
  // Label-based: the label value of each output channel (background first). Region-based: empty.
  std::vector<int> channelLabels;
  // Region-based: each output channel's label values, in dataset.json's order, and the label written
  // where that region's probability exceeds 0.5 (regions_class_order, applied in channel order).
  std::vector<std::vector<int>> regions;
  std::vector<int> regionsClassOrder;
  std::vector<std::string> channelNames;  // one per output channel
  std::map<int, std::string> maskNames;   // label value -> name for the written mask (0 left out)
  int64_t outputChannels() const { return static_cast<int64_t>(regionBased ? regions.size() : channelLabels.size()); }
};

// Per input channel: its normalisation (nnU-Net's class name) and the statistics it may use.
struct ChannelNormalisation {
  std::string scheme;     // ZScoreNormalization, CTNormalization, NoNormalization, RescaleTo01Normalization
  bool useMask = false;   // use_mask_for_norm: statistics over the nonzero region only
  double mean = 0, std = 1, lowerPercentile = 0, upperPercentile = 0;  // CTNormalization's
};

// One configuration of plans.json, its inheritance resolved.
struct NnunetConfiguration {
  std::string name;
  std::vector<int64_t> patchSize;   // (z, y, x), or (y, x) for 2-D configurations
  std::vector<double> spacing;      // target spacing, same order and length
  std::vector<ChannelNormalisation> normalisation;
  ResamplingSettings dataResampling;
  ResamplingSettings probabilityResampling;
  nlohmann::json architecture;      // {network_class_name, arch_kwargs, _kw_requires_import}
  bool is2d() const { return patchSize.size() == 2; }
};

struct NnunetModelFolder {
  std::filesystem::path root;
  std::string datasetName;
  std::string trainerName;  // from the folder name (<trainer>__<plans>__<configuration>), informative
  std::vector<std::string> channelNames;  // input channels in order (dataset.json channel_names)
  NnunetLabels labels;
  std::array<int, 3> transposeForward{0, 1, 2};
  std::array<int, 3> transposeBackward{0, 1, 2};
  std::vector<std::string> configurations;  // names in plans.json, in its order
  nlohmann::ordered_json plans;        // as written (configurations in their order)
  nlohmann::ordered_json datasetJson;

  // The configuration `name`, inheritance resolved; InputError for an unknown one (listing those
  // there are), for a cascade stage (it needs the previous stage's segmentation) and for anything in
  // it MedSeg does not run (another preprocessor, normalisation or resampling function).
  NnunetConfiguration configuration(const std::string& name) const;
  // fold_N folders holding `checkpointName`, ascending (nnU-Net's auto-detection: fold_all left out).
  std::vector<int> availableFolds(const std::string& checkpointName) const;
  std::filesystem::path checkpointPath(int fold, const std::string& checkpointName) const;
};

// Whether `folder` has the layout of a trained-model folder (plans.json, dataset.json, fold_*/): a
// cheap look, for picking the plugin.
bool isNnunetModelFolder(const std::filesystem::path& folder);

// Reads dataset.json and plans.json; InputError naming the file and key for what is missing or wrong.
NnunetModelFolder readNnunetModelFolder(const std::filesystem::path& folder);

}  // namespace medseg::nnunet
