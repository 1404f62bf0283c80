#include "app/render/LabelPalette.h"

#include <algorithm>

namespace medseg::render {

LabelLook labelLook(const LabelTable& table, int label) {
  const LabelEntry entry = table.entryFor(label);
  return {entry.name, {entry.rgb[0], entry.rgb[1], entry.rgb[2]}, entry.opacity};
}

LabelLook defaultLabelLook(int label) { return labelLook(LabelTable{}, label); }

double surfaceOpacity(double overlayOpacity) { return std::clamp(overlayOpacity + 0.3, 0.0, 1.0); }

}  // namespace medseg::render
