#include "core/eval/DistanceTransform.h"

#include <limits>
#include <stdexcept>

namespace medseg {

namespace {
constexpr double kInfinity = std::numeric_limits<double>::infinity();

// One line: out[p] = min_q ((p - q) * step)^2 + in[q], via the lower envelope of parabolas rooted at
// every finite sample. Scratch buffers are reused across lines.
struct LinePass {
  std::vector<double> in, out, boundaries;
  std::vector<int64_t> roots;

  void run(int64_t n, double step) {
    roots.resize(static_cast<size_t>(n));
    boundaries.resize(static_cast<size_t>(n) + 1);
    out.resize(static_cast<size_t>(n));
    int64_t k = -1;
    for (int64_t q = 0; q < n; ++q) {
      if (in[q] == kInfinity) continue;
      const double pq = static_cast<double>(q) * step;
      double s = -kInfinity;
      while (k >= 0) {
        const int64_t r = roots[k];
        const double pr = static_cast<double>(r) * step;
        s = ((in[q] + pq * pq) - (in[r] + pr * pr)) / (2.0 * (pq - pr));
        if (s > boundaries[k]) break;
        --k;
      }
      if (k < 0) s = -kInfinity;
      ++k;
      roots[k] = q;
      boundaries[k] = s;
      boundaries[k + 1] = kInfinity;
    }
    if (k < 0) {
      std::fill(out.begin(), out.end(), kInfinity);
      return;
    }
    int64_t segment = 0;
    for (int64_t p = 0; p < n; ++p) {
      const double pp = static_cast<double>(p) * step;
      while (boundaries[segment + 1] < pp) ++segment;
      const double d = pp - static_cast<double>(roots[segment]) * step;
      out[p] = d * d + in[roots[segment]];
    }
  }
};

// Applies the 1-D pass along `axis` to every line of the volume in place.
void passAlongAxis(std::vector<double>& field, const std::array<int64_t, 3>& size, int axis, double step) {
  const int64_t stride[3] = {1, size[0], size[0] * size[1]};
  const int a = (axis + 1) % 3, b = (axis + 2) % 3;
  LinePass line;
  line.in.resize(static_cast<size_t>(size[axis]));
  for (int64_t i = 0; i < size[a]; ++i)
    for (int64_t j = 0; j < size[b]; ++j) {
      const int64_t base = i * stride[a] + j * stride[b];
      for (int64_t t = 0; t < size[axis]; ++t) line.in[t] = field[base + t * stride[axis]];
      line.run(size[axis], step);
      for (int64_t t = 0; t < size[axis]; ++t) field[base + t * stride[axis]] = line.out[t];
    }
}
}  // namespace

std::vector<double> squaredDistanceToSites(const std::vector<uint8_t>& sites, const std::array<int64_t, 3>& size,
                                           const std::array<double, 3>& spacing) {
  if (static_cast<int64_t>(sites.size()) != size[0] * size[1] * size[2])
    throw std::invalid_argument("distance transform: site mask does not match the grid size");
  std::vector<double> field(sites.size());
  for (size_t i = 0; i < sites.size(); ++i) field[i] = sites[i] ? 0.0 : kInfinity;
  for (int axis = 0; axis < 3; ++axis) passAlongAxis(field, size, axis, spacing[axis]);
  return field;
}

}  // namespace medseg
