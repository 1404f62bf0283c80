#pragma once
// A gantry-tilted DICOM stack (CT acquired with a tilted gantry) steps sideways from slice to slice
// as well as along the slice normal. ITK stacks the slices along the normal only, which would place
// every slice but the first off its true position by up to the whole sideways travel. The stack is
// put back on a right-angled grid instead, as 3D Slicer's acquisition geometry regularisation does:
// each slice is shifted in-plane by its own sideways offset (bilinear), onto a grid widened so that
// no voxel is lost, and every voxel keeps its world position.
#include "core/io/DicomSeriesScan.h"
#include "core/io/ImageIO.h"

namespace medseg {

// Tilts up to this many degrees are put on a grid; steeper "tilts" are refused as malformed.
constexpr double kMaxGantryTiltDegrees = 45.0;

// True when `stack` (as read into `stacked`, slice i at stack.files[i]) moves its last slice off the
// normal by a tenth of a voxel or more.
bool hasGantryTilt(const DicomSliceStack& stack, const ImageHeader& stacked);

// The header of the right-angled grid that holds the tilted stack: widened in-plane, spacing along
// the normal = the slices' distance along it, gantryTiltDegrees set. ImageIOError past the limit above.
ImageHeader untiltedHeader(const std::filesystem::path& directory, const DicomSliceStack& stack, const ImageHeader& stacked);

// The voxels of `stacked` (one channel) on untiltedHeader's grid; outside the acquired slices the
// volume's minimum (the scan's background).
ImageVolume untiltStack(const std::filesystem::path& directory, const DicomSliceStack& stack, const ImageVolume& stacked);

}  // namespace medseg
