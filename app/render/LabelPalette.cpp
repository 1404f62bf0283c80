#include "app/render/LabelPalette.h"

#include <algorithm>

namespace medseg::render {

LabelLook defaultLabelLook(int label) {
  switch (label) {
    case 1: return {"edema", {40, 200, 60}, 0.45};
    case 2: return {"non-enhancing", {230, 60, 50}, 0.55};
    case 3: return {"enhancing", {250, 220, 40}, 0.6};
    default: break;
  }
  static const Rgb palette[] = {{60, 120, 250}, {250, 120, 200}, {80, 220, 220}, {180, 100, 250}, {250, 160, 60}};
  return {"label " + std::to_string(label), palette[((label % 5) + 5) % 5], 0.5};
}

double surfaceOpacity(double overlayOpacity) { return std::clamp(overlayOpacity + 0.3, 0.0, 1.0); }

}  // namespace medseg::render
