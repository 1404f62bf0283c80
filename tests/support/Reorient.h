#pragma once
// The same anatomy stored in another voxel order, as nibabel's `as_reoriented` makes it: voxel axes
// permuted and flipped, the direction matrix and origin adjusted so that every voxel keeps its
// world position. Tests use it to check that viewers and tools depend on anatomy, not storage.
#include <array>
#include <stdexcept>
#include <string>

#include "core/io/PatientOrientation.h"
#include "core/io/Volume.h"

namespace medseg::test {

struct Reorientation {
  std::array<int, 3> source{0, 1, 2};  // for each new voxel axis, the original axis it comes from
  std::array<bool, 3> flipped{false, false, false};
  Size3 originalSize{0, 0, 0};

  // The new index of an original voxel.
  std::array<int64_t, 3> toNew(const std::array<int64_t, 3>& original) const {
    std::array<int64_t, 3> index{};
    for (int i = 0; i < 3; ++i) {
      const int64_t k = original[source[i]];
      index[i] = flipped[i] ? originalSize[source[i]] - 1 - k : k;
    }
    return index;
  }
};

// `code` is the target orientation ("PIR": axis 0 increases toward posterior, 1 toward inferior, 2
// toward right) of a grid whose axes lie along the patient axes.
inline Reorientation planReorientation(const Geometry& geometry, const Size3& size, const std::string& code) {
  const AxisMapping mapping = nearestPatientAxes(geometry);
  Reorientation plan;
  plan.originalSize = size;
  for (int i = 0; i < 3; ++i) {
    const std::string letters = "LRPAIS";
    const auto found = letters.find(code.at(i));
    if (found == std::string::npos) throw std::invalid_argument("orientation letter '" + code.substr(i, 1) + "'");
    const int patient = static_cast<int>(found / 2);
    const int sign = found % 2 == 0 ? (patient == 2 ? -1 : +1) : (patient == 2 ? +1 : -1);  // L,P,S are +1
    plan.source[i] = mapping.voxelAxis[patient];
    plan.flipped[i] = mapping.sign[patient] != sign;
  }
  return plan;
}

template <typename T>
Volume<T> reorient(const Volume<T>& volume, const std::string& code) {
  const Reorientation plan = planReorientation(volume.geometry, volume.size, code);
  Geometry geometry;
  Size3 size{};
  std::array<double, 3> firstVoxel{};  // the original index of the new (0, 0, 0)
  for (int i = 0; i < 3; ++i) {
    const int s = plan.source[i];
    size[i] = volume.size[s];
    geometry.spacing[i] = volume.geometry.spacing[s];
    for (int row = 0; row < 3; ++row)
      geometry.direction[row * 3 + i] = volume.geometry.direction[row * 3 + s] * (plan.flipped[i] ? -1.0 : 1.0);
    firstVoxel[s] = plan.flipped[i] ? static_cast<double>(volume.size[s] - 1) : 0.0;
  }
  geometry.origin = volume.geometry.indexToWorld(firstVoxel);
  Volume<T> out(size, volume.channels, geometry);
  for (int64_t c = 0; c < volume.channels; ++c)
    for (int64_t z = 0; z < volume.size[2]; ++z)
      for (int64_t y = 0; y < volume.size[1]; ++y)
        for (int64_t x = 0; x < volume.size[0]; ++x) {
          const auto n = plan.toNew({x, y, z});
          out.at(n[0], n[1], n[2], c) = volume.at(x, y, z, c);
        }
  return out;
}

}  // namespace medseg::test
