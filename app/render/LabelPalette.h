#pragma once
// Label names and colours shared by every picture MedSeg draws (studio overlays, 3-D surfaces,
// `medseg render`), from the label map's table (core/io/LabelTable.h); labels it does not name get
// neutral names and a fixed palette colour, so a label keeps its colour across pictures.
#include <string>

#include "core/io/LabelTable.h"

namespace medseg::render {

struct Rgb {
  unsigned char r = 0, g = 0, b = 0;
};

struct LabelLook {
  std::string name;
  Rgb colour;
  double opacity = 0.5;  // of the slice overlay; surfaces are drawn more opaque (surfaceOpacity)
};

LabelLook labelLook(const LabelTable& table, int label);
// A label of a map without a table.
LabelLook defaultLabelLook(int label);

// Nested sub-regions: surfaces are more opaque than overlays but still see-through, so the inner
// regions (enhancing tumour inside edema) stay visible.
double surfaceOpacity(double overlayOpacity);

}  // namespace medseg::render
