#include "app/render/OffscreenSnapshot.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkPNGWriter.h>
#include <vtkRenderWindow.h>
#include <vtkRenderer.h>
#include <vtkUnsignedCharArray.h>
#include <vtkWindowToImageFilter.h>

#ifdef MEDSEG_RENDER_HAVE_X11
#include <X11/Xlib.h>
#endif

#include "core/util/AtomicFile.h"

namespace medseg::render {
namespace {
// The X connection VTK renders through. VTK's X render window aborts the process when it cannot
// open a display, so we open it and hand it over. A virtual server (Xvfb without -noreset) resets
// when its last client leaves and refuses connections for a moment: a few tries ride that out.
class DisplayConnection {
 public:
  DisplayConnection() {
#ifdef MEDSEG_RENDER_HAVE_X11
    const char* name = std::getenv("DISPLAY");
    const int attempts = name && *name ? 20 : 1;
    for (int attempt = 0; attempt < attempts && !display_; ++attempt) {
      if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      display_ = XOpenDisplay(nullptr);
    }
    if (!display_)
      throw RenderError(std::string("cannot open X display '") + (name ? name : "") +
                        "' for OpenGL rendering: run under a display, e.g. xvfb-run -a medseg render ...");
#endif
  }
  ~DisplayConnection() {
#ifdef MEDSEG_RENDER_HAVE_X11
    if (display_) XCloseDisplay(display_);
#endif
  }
  DisplayConnection(const DisplayConnection&) = delete;
  DisplayConnection& operator=(const DisplayConnection&) = delete;
  void* handle() const { return display_; }

 private:
#ifdef MEDSEG_RENDER_HAVE_X11
  Display* display_ = nullptr;
#else
  void* display_ = nullptr;
#endif
};
}  // namespace

Snapshot renderOffscreen(vtkRenderer* renderer, int width, int height) {
  if (width < 1 || height < 1 || width > 16384 || height > 16384)
    throw RenderError("picture size " + std::to_string(width) + "x" + std::to_string(height) +
                      " is out of range (1 to 16384 pixels a side)");
  const DisplayConnection display;  // outlives the window, which does not close what it did not open
  vtkNew<vtkRenderWindow> window;
  if (display.handle()) window->SetDisplayId(display.handle());
  window->SetOffScreenRendering(1);
  window->SetSize(width, height);
  window->AddRenderer(renderer);
  renderer->ResetCameraClippingRange();
  window->Render();
  vtkNew<vtkWindowToImageFilter> grab;
  grab->SetInput(window);
  grab->SetInputBufferTypeToRGB();
  grab->ReadFrontBufferOff();
  grab->Update();
  vtkImageData* image = grab->GetOutput();
  const int* dims = image->GetDimensions();
  Snapshot snapshot;
  snapshot.width = dims[0];
  snapshot.height = dims[1];
  snapshot.rgb.resize(static_cast<size_t>(dims[0]) * dims[1] * 3);
  // VTK's rows start at the bottom.
  const auto* pixels = static_cast<const uint8_t*>(image->GetScalarPointer());
  const size_t row = static_cast<size_t>(dims[0]) * 3;
  for (int y = 0; y < dims[1]; ++y)
    std::memcpy(snapshot.rgb.data() + y * row, pixels + static_cast<size_t>(dims[1] - 1 - y) * row, row);
  window->RemoveRenderer(renderer);
  window->Finalize();
  if (snapshot.width != width || snapshot.height != height)
    throw RenderError("the offscreen render window gave " + std::to_string(snapshot.width) + "x" +
                      std::to_string(snapshot.height) + " pixels instead of " + std::to_string(width) + "x" +
                      std::to_string(height));
  return snapshot;
}

void writePng(const Snapshot& snapshot, const std::filesystem::path& path) {
  vtkNew<vtkImageData> image;
  image->SetDimensions(snapshot.width, snapshot.height, 1);
  image->AllocateScalars(VTK_UNSIGNED_CHAR, 3);
  auto* pixels = static_cast<uint8_t*>(image->GetScalarPointer());
  const size_t row = static_cast<size_t>(snapshot.width) * 3;
  for (int y = 0; y < snapshot.height; ++y)
    std::memcpy(pixels + static_cast<size_t>(snapshot.height - 1 - y) * row, snapshot.rgb.data() + y * row, row);
  vtkNew<vtkPNGWriter> writer;
  writer->SetInputData(image);
  writer->WriteToMemoryOn();
  writer->Write();
  vtkUnsignedCharArray* encoded = writer->GetResult();
  if (!encoded || encoded->GetNumberOfTuples() == 0) throw RenderError("PNG encoding failed for " + path.string());
  writeFileAtomically(path, std::string(reinterpret_cast<const char*>(encoded->GetPointer(0)),
                                        static_cast<size_t>(encoded->GetNumberOfTuples())));
}

}  // namespace medseg::render
