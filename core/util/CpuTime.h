#pragma once
// CPU time, for utilisation figures (CPU seconds / wall seconds / cores) and for what one thread
// costs (the training loader's own share of the machine).
#include <functional>

namespace medseg {

double processCpuSeconds();  // every thread of this process, user + system
double threadCpuSeconds();   // the calling thread only

// Wall time and CPU utilisation of one measured piece of work.
struct Measured {
  double wallSeconds = 0.0;
  double cpuUtilisation = 0.0;  // process CPU seconds / wall seconds / usable cores
};
Measured measureWallAndCpu(const std::function<void()>& work);

}  // namespace medseg
