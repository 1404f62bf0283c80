#pragma once
// A data set written again in another layout, for the tools that read only that one: MSD (one 4-D image
// per case, dataset.json listing them) or nnU-Net v2 (one file per channel, <case>_0000.nii.gz ...,
// dataset.json with channel_names and file_ending). Channels keep the source's order and names; labels
// are written with the data set's values (a BraTS folder's codes turned into MSD's: 1 edema,
// 2 non-enhancing, 3 enhancing). The source is read only; every file is written atomically into `out`,
// which must be new or empty, and dataset.json last, so a folder with a dataset.json is complete.
#include <filesystem>

#include "core/dataset/Dataset.h"
#include "core/util/Progress.h"

namespace medseg {

// DatasetError for an `out` that holds anything, or inside the source folder; image errors name the case.
Dataset convertDataset(const Dataset& source, const std::filesystem::path& out, DatasetLayout layout, Reporter& reporter);

}  // namespace medseg
