#pragma once
// Label names and colours shared by every picture MedSeg draws (studio overlays, 3-D surfaces,
// `medseg render`): BraTS labels 1 edema, 2 non-enhancing tumour, 3 enhancing tumour, others from
// a fixed palette so a label keeps its colour across pictures.
#include <string>

namespace medseg::render {

struct Rgb {
  unsigned char r = 0, g = 0, b = 0;
};

struct LabelLook {
  std::string name;
  Rgb colour;
  double opacity = 0.5;  // of the slice overlay; surfaces are drawn more opaque (surfaceOpacity)
};

LabelLook defaultLabelLook(int label);

// Nested sub-regions: surfaces are more opaque than overlays but still see-through, so the inner
// regions (enhancing tumour inside edema) stay visible.
double surfaceOpacity(double overlayOpacity);

}  // namespace medseg::render
