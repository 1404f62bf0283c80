#pragma once
// The smallest real MedSeg model description for the checkpoint and CLI tests: a depth-2 U-Net with
// 4 base filters on two MRI channels, predicting the BraTS regions WT, TC and ET (sigmoid).
#include <string>
#include <vector>

#include "plugins/unet3d/nn/ModelDescription.h"

namespace medseg::test {

inline ModelDescription tinyRegionsDescription(std::vector<std::string> modalities = {"FLAIR", "T1gd"},
                                               int64_t patchEdge = 16) {
  ModelDescription d;
  d.network.inChannels = static_cast<int64_t>(modalities.size());
  d.network.outChannels = 3;
  d.network.depth = 2;
  d.network.baseFilters = 4;
  d.targets = TargetMode::Regions;
  d.classNames = {"WT", "TC", "ET"};
  d.regionLabels = {{1, 2, 3}, {2, 3}, {3}};
  d.patchSize = {patchEdge, patchEdge, patchEdge};
  d.modalities = std::move(modalities);
  return d;
}

}  // namespace medseg::test
