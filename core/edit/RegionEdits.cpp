#include "core/edit/RegionEdits.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace medseg {
namespace {

std::string labelName(uint8_t label) { return "label " + std::to_string(label); }

// Region edits honour locked labels; an intensity range is a painting rule and does not apply.
EditRules locksOnly(const EditRules& rules) { return {rules.lockedLabels, std::nullopt}; }

// Every 6-connected piece of `label`, each as its voxels' offsets.
std::vector<std::vector<int64_t>> islandsOf(const LabelVolume& labels, uint8_t label) {
  const Size3& n = labels.size;
  std::vector<bool> seen(labels.data.size(), false);
  std::vector<std::vector<int64_t>> islands;
  std::vector<int64_t> stack;
  for (int64_t start = 0; start < int64_t(labels.data.size()); ++start) {
    if (seen[size_t(start)] || labels.data[size_t(start)] != label) continue;
    islands.emplace_back();
    stack.push_back(start);
    seen[size_t(start)] = true;
    while (!stack.empty()) {
      const int64_t o = stack.back();
      stack.pop_back();
      islands.back().push_back(o);
      const int64_t x = o % n[0], y = (o / n[0]) % n[1], z = o / (n[0] * n[1]);
      const int64_t neighbours[6][3] = {{x - 1, y, z}, {x + 1, y, z}, {x, y - 1, z}, {x, y + 1, z}, {x, y, z - 1}, {x, y, z + 1}};
      for (const auto& v : neighbours) {
        if (!labels.contains(v[0], v[1], v[2])) continue;
        const int64_t next = int64_t(labels.offset(0, v[0], v[1], v[2]));
        if (seen[size_t(next)] || labels.data[size_t(next)] != label) continue;
        seen[size_t(next)] = true;
        stack.push_back(next);
      }
    }
  }
  return islands;
}

LabelEdit clearIslands(LabelVolume& labels, const EditRules& rules, uint8_t label, const std::vector<std::vector<int64_t>>& islands,
                       const std::string& description) {
  LabelEditBuilder edit(labels, locksOnly(rules));
  const Size3& n = labels.size;
  for (const auto& island : islands)
    for (int64_t o : island) edit.clear(o % n[0], (o / n[0]) % n[1], o / (n[0] * n[1]), label);
  return edit.finish(description);
}

}  // namespace

LabelEdit fillHolesInSlice(LabelVolume& labels, const EditRules& rules, int sliceAxis, int64_t slice, uint8_t label) {
  if (sliceAxis < 0 || sliceAxis > 2 || slice < 0 || slice >= labels.size[size_t(sliceAxis)])
    throw std::invalid_argument("fill holes: slice " + std::to_string(slice) + " is not in the label map");
  // The slice's two in-plane axes; a voxel of the plane is (u, v).
  const int ua = sliceAxis == 0 ? 1 : 0, va = sliceAxis == 2 ? 1 : 2;
  const int64_t nu = labels.size[size_t(ua)], nv = labels.size[size_t(va)];
  auto voxel = [&](int64_t u, int64_t v) {
    std::array<int64_t, 3> p{0, 0, 0};
    p[size_t(sliceAxis)] = slice;
    p[size_t(ua)] = u;
    p[size_t(va)] = v;
    return p;
  };
  auto isLabel = [&](int64_t u, int64_t v) {
    const auto p = voxel(u, v);
    return labels.at(p[0], p[1], p[2]) == label;
  };
  // Flood the outside from the border through voxels of other labels; what it cannot reach is enclosed.
  std::vector<bool> outside(size_t(nu * nv), false);
  std::vector<std::pair<int64_t, int64_t>> stack;
  auto seed = [&](int64_t u, int64_t v) {
    if (!isLabel(u, v) && !outside[size_t(v * nu + u)]) outside[size_t(v * nu + u)] = true, stack.emplace_back(u, v);
  };
  for (int64_t u = 0; u < nu; ++u) seed(u, 0), seed(u, nv - 1);
  for (int64_t v = 0; v < nv; ++v) seed(0, v), seed(nu - 1, v);
  while (!stack.empty()) {
    const auto [u, v] = stack.back();
    stack.pop_back();
    if (u > 0) seed(u - 1, v);
    if (u + 1 < nu) seed(u + 1, v);
    if (v > 0) seed(u, v - 1);
    if (v + 1 < nv) seed(u, v + 1);
  }
  LabelEditBuilder edit(labels, locksOnly(rules));
  for (int64_t v = 0; v < nv; ++v)
    for (int64_t u = 0; u < nu; ++u)
      if (!outside[size_t(v * nu + u)] && !isLabel(u, v)) {
        const auto p = voxel(u, v);
        edit.set(p[0], p[1], p[2], label);
      }
  const char* axisName[] = {"x", "y", "z"};
  return edit.finish("fill holes of " + labelName(label) + " in slice " + axisName[sliceAxis] + "=" + std::to_string(slice));
}

LabelEdit removeSmallIslands(LabelVolume& labels, const EditRules& rules, uint8_t label, int64_t minVoxels) {
  auto islands = islandsOf(labels, label);
  islands.erase(std::remove_if(islands.begin(), islands.end(), [&](const auto& i) { return int64_t(i.size()) >= minVoxels; }),
                islands.end());
  return clearIslands(labels, rules, label, islands,
                      "remove islands of " + labelName(label) + " under " + std::to_string(minVoxels) + " voxels");
}

LabelEdit keepLargestIsland(LabelVolume& labels, const EditRules& rules, uint8_t label) {
  auto islands = islandsOf(labels, label);
  if (islands.size() > 1) {
    const auto largest = std::max_element(islands.begin(), islands.end(), [](const auto& a, const auto& b) { return a.size() < b.size(); });
    islands.erase(largest);
  } else {
    islands.clear();
  }
  return clearIslands(labels, rules, label, islands, "keep the largest island of " + labelName(label));
}

LabelEdit mergeInto(LabelVolume& labels, const EditRules& rules, const LabelVolume& segmentation, uint8_t label,
                    const std::string& source) {
  if (segmentation.size != labels.size)
    throw std::invalid_argument("the segmentation from " + source + " (" + describeSize(segmentation.size) +
                                ") is not on the label map's grid (" + describeSize(labels.size) + ")");
  LabelEditBuilder edit(labels, locksOnly(rules));
  const Size3& n = labels.size;
  for (int64_t o = 0; o < int64_t(segmentation.data.size()); ++o)
    if (segmentation.data[size_t(o)] != 0) edit.set(o % n[0], (o / n[0]) % n[1], o / (n[0] * n[1]), label);
  return edit.finish(source + " merged into " + labelName(label));
}

}  // namespace medseg
