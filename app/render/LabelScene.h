#pragma once
// The 3-D scene of a segmentation, shared by the studio's 3-D view and `medseg render`: smoothed
// surfaces of the labels, a faint brain surface for context and an optional volume rendering of
// one channel, all placed in world (LPS, mm) space, on MedSeg's background, with a standard camera.
// It fills a vtkRenderer it does not own; whoever owns the render window draws it. Surfaces are
// either built here, synchronously (setBrain, setLabels), or built elsewhere, e.g. on a worker
// thread, and handed in finished (setBrainSurface, addLabelSurface).
#include <map>
#include <vector>

#include <vtkSmartPointer.h>

#include "app/render/LabelPalette.h"
#include "app/render/LabelSurfaces.h"
#include "app/render/SurfaceExtraction.h"
#include "core/io/Volume.h"

class vtkActor;
class vtkPolyData;
class vtkRenderer;
class vtkVolume;

namespace medseg::render {

// The default view: from the patient's front, head up, turned a little for depth.
constexpr double kDefaultAzimuth = 30.0;
constexpr double kDefaultElevation = 20.0;

class LabelScene {
 public:
  explicit LabelScene(vtkRenderer* renderer);
  ~LabelScene();
  LabelScene(const LabelScene&) = delete;
  LabelScene& operator=(const LabelScene&) = delete;

  // The brain context surface from the non-zero voxels of `channel`; an empty image clears it.
  void setBrain(const ImageVolume& image, int channel = 0);
  // A brain surface from extractBrainSurface; nullptr clears it.
  void setBrainSurface(vtkPolyData* surface, const Geometry& geometry);
  void setBrainOpacity(double opacity);
  // One surface per label present in `labels` (only those in `only` when it is not empty), in the
  // look `table` gives each label until setLabelStyle changes it, within options' triangle budget.
  // An empty volume clears them.
  void setLabels(const LabelVolume& labels, const std::vector<int>& only = {}, const LabelTable& table = {},
                 const SurfaceOptions& options = {});
  // A finished label surface (LabelSurfaces.h), replacing that label's; clearLabelSurfaces removes all.
  void addLabelSurface(int label, vtkPolyData* surface, const Geometry& geometry, const LabelLook& look);
  void clearLabelSurfaces();
  void removeLabelSurface(int label);
  // `overlayOpacity` as in the slice overlay; the surface uses surfaceOpacity() of it.
  void setLabelStyle(int label, Rgb colour, double overlayOpacity, bool visible);
  // Volume rendering of one channel, transparent below `range.lower`, brightest at `range.upper`.
  void setVolume(const ImageVolume& image, int channel, IntensityRange range);
  // Only the transfer functions: no new copy of the voxels (window/level drags call it often).
  void setVolumeRange(IntensityRange range);
  bool hasVolume() const { return volume_ != nullptr; }
  void clearVolume();

  std::vector<int> surfaceLabels() const;
  int surfaceCount() const { return static_cast<int>(labelActors_.size()); }
  long long triangleCount() const;  // over all label surfaces

  // Looks at the visible props from the patient's front (superior up), turned by `azimuth`
  // degrees about the vertical and `elevation` degrees up, at a distance that fits them all.
  void placeCamera(double azimuth = kDefaultAzimuth, double elevation = kDefaultElevation);

 private:
  vtkRenderer* renderer_;
  vtkSmartPointer<vtkActor> brainActor_;
  std::map<int, vtkSmartPointer<vtkActor>> labelActors_;
  vtkSmartPointer<vtkVolume> volume_;
};

}  // namespace medseg::render
