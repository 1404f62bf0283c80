#include "cluster/scaling/AllreduceFit.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/util/Interrupt.h"

namespace medseg::cluster {

AllreduceFit fitRingAllreduce(int ranks, const std::vector<AllreduceSample>& samples) {
  if (ranks < 2) throw InputError("allreduce fit: a ring of " + std::to_string(ranks) + " rank(s) sends nothing; measure with 2 or more ranks");
  std::set<double> sizes;
  for (const auto& s : samples) sizes.insert(s.bytes);
  if (sizes.size() < 2) throw InputError("allreduce fit: needs timings at 2 or more message sizes, got " + std::to_string(sizes.size()));
  // Least squares of relative errors (weights 1/T^2): the sizes span four orders of magnitude, and
  // plain least squares would let the largest message alone decide the fit (and the latency).
  double weights = 0, meanX = 0, meanY = 0;
  for (const auto& s : samples) {
    if (!(s.seconds > 0)) throw InputError("allreduce fit: a timing of " + std::to_string(s.seconds) + " s is not positive");
    const double w = 1.0 / (s.seconds * s.seconds);
    weights += w;
    meanX += w * s.bytes;
    meanY += w * s.seconds;
  }
  meanX /= weights;
  meanY /= weights;
  double sxx = 0, sxy = 0;
  for (const auto& s : samples) {
    const double w = 1.0 / (s.seconds * s.seconds);
    sxx += w * (s.bytes - meanX) * (s.bytes - meanX);
    sxy += w * (s.bytes - meanX) * (s.seconds - meanY);
  }
  AllreduceFit fit;
  fit.ranks = ranks;
  fit.secondsPerByte = sxy / sxx;
  fit.interceptSeconds = meanY - fit.secondsPerByte * meanX;
  if (!(fit.secondsPerByte > 0))
    throw InputError("allreduce fit: larger messages did not take longer (slope " + std::to_string(fit.secondsPerByte) +
                     " s/B); measure larger sizes or more repetitions");
  double squares = 0;
  for (const auto& s : samples) {
    const double residual = s.seconds - (fit.interceptSeconds + fit.secondsPerByte * s.bytes);
    squares += residual * residual;
  }
  fit.rmsResidualSeconds = std::sqrt(squares / static_cast<double>(samples.size()));
  const double p = ranks;
  // A small negative intercept is timing noise around zero latency, not a negative latency.
  fit.link.alphaSeconds = std::max(0.0, fit.interceptSeconds) / (2.0 * (p - 1.0));
  fit.link.bytesPerSecond = 2.0 * (p - 1.0) / (p * fit.secondsPerByte);
  return fit;
}

}  // namespace medseg::cluster
