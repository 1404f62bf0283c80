#pragma once
// What is scored is data, not code: a scheme is a list of named regions, each the union of some
// label values (nnU-Net's "regions" idea). BraTS scores the three labels and the nested regions
// whole tumour (WT = 1,2,3), tumour core (TC = 2,3) and enhancing tumour (ET = 3).
#include <cstdint>
#include <string>
#include <vector>

namespace medseg {

struct EvaluationRegion {
  std::string name;             // "edema", "WT", ...
  std::vector<uint8_t> labels;  // voxel belongs to the region when its label is one of these
};

struct LabelScheme {
  std::string name;  // "brats"
  std::vector<EvaluationRegion> regions;
};

// Labels 1 edema, 2 non-enhancing tumour, 3 enhancing tumour, then WT, TC, ET.
LabelScheme bratsLabelScheme();
// Everything that is not background (label > 0) as one region "foreground".
LabelScheme binaryLabelScheme();

std::vector<std::string> labelSchemeNames();  // {"brats", "binary"}
// Throws InputError naming the known schemes when `name` is not one of them.
LabelScheme labelSchemeByName(const std::string& name);

}  // namespace medseg
