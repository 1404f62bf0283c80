#pragma once
// The label table a mask file is shown with: the table kept beside it (ITK-SNAP, Slicer, mricron;
// core/io/LabelTable.h), else, for a BraTS case's segmentation, the challenge's names for its codes, else,
// for a mask in a data set's labelsTr/ or labelsTs/ folder, the label names its dataset.json declares, so
// an MSD or nnU-Net label map opens with "edema", not "label 1".
#include <filesystem>
#include <optional>

#include "core/io/LabelTable.h"

namespace medseg {

// std::nullopt when neither says anything (the mask then gets neutral names).
std::optional<LabelTable> labelTableForMask(const std::filesystem::path& mask);

}  // namespace medseg
