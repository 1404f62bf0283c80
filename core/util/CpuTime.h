#pragma once
// CPU time, for utilisation figures (CPU seconds / wall seconds / cores) and for what one thread
// costs (the training loader's own share of the machine).
namespace medseg {

double processCpuSeconds();  // every thread of this process, user + system
double threadCpuSeconds();   // the calling thread only

}  // namespace medseg
