#include "core/eval/LabelRegions.h"

#include "core/util/Interrupt.h"

namespace medseg {

LabelScheme bratsLabelScheme() {
  return {"brats",
          {{"edema", {1}},
           {"non-enhancing", {2}},
           {"enhancing", {3}},
           {"WT", {1, 2, 3}},
           {"TC", {2, 3}},
           {"ET", {3}}}};
}

LabelScheme binaryLabelScheme() {
  EvaluationRegion foreground{"foreground", {}};
  for (int label = 1; label <= 255; ++label) foreground.labels.push_back(static_cast<uint8_t>(label));
  return {"binary", {foreground}};
}

std::vector<std::string> labelSchemeNames() { return {"brats", "binary"}; }

LabelScheme labelSchemeByName(const std::string& name) {
  if (name == "brats") return bratsLabelScheme();
  if (name == "binary") return binaryLabelScheme();
  std::string known;
  for (const auto& n : labelSchemeNames()) known += (known.empty() ? "" : ", ") + n;
  throw InputError("unknown label scheme \"" + name + "\"; known schemes: " + known);
}

}  // namespace medseg
