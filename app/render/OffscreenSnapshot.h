#pragma once
// Pictures of a vtkRenderer without any widget: VTK draws into an offscreen render window of the
// requested size and the pixels are read back. Debian's VTK renders through X (GLX), so this needs
// a display, real or virtual (xvfb-run); without one it throws RenderError instead of aborting.
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "app/render/LabelPalette.h"

class vtkRenderer;

namespace medseg::render {

class RenderError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Snapshot {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> rgb;  // rows from the top, 3 bytes a pixel
  Rgb pixel(int x, int y) const {
    const size_t i = (static_cast<size_t>(y) * width + x) * 3;
    return {rgb[i], rgb[i + 1], rgb[i + 2]};
  }
};

// Throws RenderError when no display can be opened or OpenGL is unusable.
Snapshot renderOffscreen(vtkRenderer* renderer, int width, int height);
// PNG, written atomically (a temporary file renamed over `path`).
void writePng(const Snapshot& snapshot, const std::filesystem::path& path);

}  // namespace medseg::render
