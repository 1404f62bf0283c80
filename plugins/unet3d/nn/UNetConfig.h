#pragma once
// The layout of MedSeg's 3-D U-Net as configs and checkpoints store it. Kept apart from the network
// (UNet3d.h) so that code which only reads or writes configurations compiles without LibTorch's headers.
#include <algorithm>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace medseg {

struct UNetConfig {
  int64_t inChannels = 4;
  int64_t outChannels = 4;            // classes (labels mode) or 3 regions (regions mode)
  int64_t depth = 4;                  // resolution levels, including the full-resolution one
  int64_t baseFilters = 16;
  int64_t maxFilters = 320;
  std::string norm = "instance";      // "instance", "batch" or "group"
  double leakySlope = 0.01;
  bool residual = false;
  bool deepSupervision = false;

  nlohmann::json toJson() const;
  static UNetConfig fromJson(const nlohmann::json& json);  // missing keys keep the defaults
  // The input edge must be divisible by this (2^(depth-1)).
  int64_t sizeDivisor() const { return int64_t{1} << (depth - 1); }
  // Feature channels at resolution level `level` (0 = full resolution): base * 2^level, capped.
  int64_t filtersAt(int64_t level) const { return std::min(maxFilters, baseFilters << level); }
  // Deep-supervision outputs besides the full-resolution one (decoder levels 1 .. depth-2).
  int64_t deepSupervisionHeads() const { return deepSupervision ? std::max<int64_t>(0, depth - 2) : 0; }
};

}  // namespace medseg
