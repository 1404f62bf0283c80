#include "core/util/CpuTime.h"

#include <algorithm>
#include <chrono>

#include <sys/resource.h>
#include <time.h>

#include "core/util/Cores.h"
#include "core/util/Elapsed.h"

namespace medseg {

double processCpuSeconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

double threadCpuSeconds() {
  timespec now{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

Measured measureWallAndCpu(const std::function<void()>& work) {
  const double cpuBefore = processCpuSeconds();
  const auto start = std::chrono::steady_clock::now();
  work();
  Measured m;
  m.wallSeconds = secondsSince(start);
  m.cpuUtilisation = (processCpuSeconds() - cpuBefore) / std::max(1e-9, m.wallSeconds) / usableCores();
  return m;
}

}  // namespace medseg
