#pragma once
// Exact Euclidean distance transform on an anisotropic voxel grid (Felzenszwalb & Huttenlocher's
// separable lower-envelope algorithm, O(voxels)): for every voxel, the squared distance in mm^2 to
// the nearest site voxel. Used by the surface-distance metrics (HD95).
#include <array>
#include <cstdint>
#include <vector>

namespace medseg {

// `sites` holds nx*ny*nz flags, x fastest. Voxels with no site anywhere get +infinity.
std::vector<double> squaredDistanceToSites(const std::vector<uint8_t>& sites, const std::array<int64_t, 3>& size,
                                           const std::array<double, 3>& spacing);

}  // namespace medseg
