#pragma once
// Edits of whole regions of one label, each a LabelEdit (so it is undone like a brush stroke), each
// under the same EditRules:
//  - fillHolesInSlice: in one slice, the voxels enclosed by `label` (not 4-connected to the slice's
//    border through other voxels) become `label`, as ITK-SNAP's and Slicer's hole filling;
//  - removeSmallIslands / keepLargestIsland: 6-connected pieces of `label` (3-D) below a size, or all
//    but the largest, become background;
//  - mergeInto: the voxels a segmentation marks (any non-zero label) become `label`: how a prompt
//    plugin's result (a seed-grown region) joins the active label.
// Locked labels are kept; an intensity range (a painting rule) does not apply to them.
#include <cstdint>
#include <string>

#include "core/edit/EditRules.h"

namespace medseg {

LabelEdit fillHolesInSlice(LabelVolume& labels, const EditRules& rules, int sliceAxis, int64_t slice, uint8_t label);
LabelEdit removeSmallIslands(LabelVolume& labels, const EditRules& rules, uint8_t label, int64_t minVoxels);
LabelEdit keepLargestIsland(LabelVolume& labels, const EditRules& rules, uint8_t label);
// std::invalid_argument when `segmentation` is not on the labels' grid.
LabelEdit mergeInto(LabelVolume& labels, const EditRules& rules, const LabelVolume& segmentation, uint8_t label,
                    const std::string& source);

}  // namespace medseg
