#pragma once
// Seconds on the steady clock since `start`: the one way timings in reports and logs are taken.
#include <chrono>

namespace medseg {

inline double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace medseg
