#pragma once
// Which values of a label map are the brain-tumour sub-regions, told by what their names mean rather
// than how they are spelt: MSD Task01 (1 "edema", 2 "non-enhancing tumor", 3 "enhancing tumour"),
// BraTS 2021 (1 "NCR/NET", 2 "ED", 4 "ET"), BraTS 2023+ (1 "NETC", 2 "SNFH", 3 "ET") and nnU-Net's
// dataset.json files all name the same three parts differently. From the parts come the BraTS
// evaluation regions: whole tumour (all three), tumour core (non-enhancing core and enhancing),
// enhancing tumour.
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace medseg {

enum class TumourPart { Edema, NonEnhancingCore, Enhancing };

// The part a label name stands for (case, "tumor"/"tumour", hyphens, a trailing "(N)" and BraTS
// abbreviations aside); std::nullopt for a name that is none of them ("background", "left hippocampus").
std::optional<TumourPart> tumourPartNamed(const std::string& name);

// The label values of each part, and the BraTS regions made of them.
struct TumourLabelValues {
  std::vector<int> edema;
  std::vector<int> nonEnhancingCore;
  std::vector<int> enhancing;
  std::vector<int> wholeTumour() const;      // edema, core and enhancing
  std::vector<int> tumourCore() const;       // core and enhancing
  std::vector<int> enhancingTumour() const;  // enhancing
};

// The parts of a label map named by `names` (value -> name); std::nullopt unless each of the three
// parts has a value, so an atlas or a binary mask gets no tumour regions.
std::optional<TumourLabelValues> tumourLabelsOf(const std::map<int, std::string>& names);

}  // namespace medseg
