#pragma once
// Link cost measured instead of assumed: MPI_Allreduce timed at two or more message sizes on the
// ranks a study runs with (AllreduceProbe.h), fitted by least squares (of relative errors) to the
// ring model
//     T(n) = 2(p-1)·alpha + 2(p-1)/p · n/beta   =  a + b·n
// so alpha = a / (2(p-1)) and beta = 2(p-1) / (p·b). What it measures is the link those ranks use on
// this machine (shared memory between local ranks), not NVLink or InfiniBand.
#include <vector>

#include "cluster/scaling/PerformanceModel.h"

namespace medseg::cluster {

struct AllreduceSample {
  double bytes = 0.0;
  double seconds = 0.0;  // one MPI_Allreduce of `bytes` (the best of several repetitions)
};

struct AllreduceFit {
  int ranks = 2;
  LinkCost link;             // alpha and beta of the ring model
  double interceptSeconds = 0.0;    // a
  double secondsPerByte = 0.0;      // b
  double rmsResidualSeconds = 0.0;  // how well the straight line fits the samples
};

// InputError when fewer than two distinct sizes were measured, ranks < 2, or the times do not grow
// with the message size (beta would be negative or infinite: measure larger messages).
AllreduceFit fitRingAllreduce(int ranks, const std::vector<AllreduceSample>& samples);

}  // namespace medseg::cluster
