#pragma once
// What a user points at, for plugins whose capabilities list "seed-points": voxel indices (x, y, z)
// of the image being segmented, each with the label it should grow (0: the plugin's own). The
// studio gives the points clicked in its slice views, the command line `--seed x,y,z[:label]`.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace medseg::plugin {

struct SeedPoint {
  std::array<int64_t, 3> voxel{0, 0, 0};
  int label = 0;
};

struct Prompts {
  std::vector<SeedPoint> seeds;
  bool empty() const { return seeds.empty(); }
  nlohmann::json toJson() const;
};

// "x,y,z" or "x,y,z:label" (voxel indices, label 1..255); PluginError saying the form otherwise.
SeedPoint parseSeedPoint(const std::string& text);

}  // namespace medseg::plugin
