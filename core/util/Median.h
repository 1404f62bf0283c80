#pragma once
// Middles of samples.
//
// lowerMedianBy: the lower middle of a sample ordered by a key: for an odd count its median, for an even one the
// smaller of the two middle ones. Measurements take it rather than a mean so that the value it names
// is one run that happened (with its own files and figures) and one outlying run on a shared machine
// does not move it.
#include <algorithm>
#include <stdexcept>
#include <vector>

namespace medseg {

template <typename T, typename Key>
const T& lowerMedianBy(const std::vector<T>& sample, Key key) {
  if (sample.empty()) throw std::invalid_argument("lowerMedianBy: an empty sample has no median");
  std::vector<const T*> order;
  for (const T& value : sample) order.push_back(&value);
  std::stable_sort(order.begin(), order.end(), [&](const T* a, const T* b) { return key(*a) < key(*b); });
  return *order[(order.size() - 1) / 2];
}

// The median of numbers as statistics.median computes it (the mean of the two middle ones for an even
// count), so that a figure compared with a Python peer's is taken the same way on both sides.
inline double median(std::vector<double> sample) {
  if (sample.empty()) throw std::invalid_argument("median: an empty sample has no median");
  std::sort(sample.begin(), sample.end());
  const size_t middle = sample.size() / 2;
  return sample.size() % 2 ? sample[middle] : 0.5 * (sample[middle - 1] + sample[middle]);
}

}  // namespace medseg
