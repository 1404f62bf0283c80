#pragma once
// Times MPI_Allreduce (float32 sum, in place) at a few message sizes on the ranks of a communicator,
// for fitting the link's alpha and beta (cluster/scaling/AllreduceFit.h) instead of assuming them.
// Collective: every rank of comm calls it with the same sizes; each size is timed `repetitions`
// times after a warm-up, between barriers, and the slowest rank's time of the fastest repetition is
// kept (the least disturbed by other work on the machine, and what the ring as a whole needed).
#if MEDSEG_HAVE_MPI
#include <mpi.h>

#include <vector>

#include "cluster/scaling/AllreduceFit.h"

namespace medseg::cluster {

// Message sizes from 4 KiB to 16 MiB, x4 apart (7 sizes): small ones for latency, large for bandwidth.
std::vector<double> defaultProbeBytes();
std::vector<AllreduceSample> probeAllreduce(MPI_Comm comm, const std::vector<double>& bytes, int repetitions = 5);

}  // namespace medseg::cluster
#endif
