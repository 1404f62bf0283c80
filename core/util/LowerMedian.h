#pragma once
// The lower middle of a sample ordered by a key: for an odd count its median, for an even one the
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

}  // namespace medseg
