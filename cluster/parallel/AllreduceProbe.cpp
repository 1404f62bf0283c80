#include "cluster/parallel/AllreduceProbe.h"

#if MEDSEG_HAVE_MPI
#include <algorithm>
#include <limits>

#include "cluster/parallel/MpiEnvironment.h"

namespace medseg::cluster {

std::vector<double> defaultProbeBytes() {
  std::vector<double> sizes;
  for (double bytes = 4096; bytes <= 16.0 * 1024 * 1024; bytes *= 4) sizes.push_back(bytes);
  return sizes;
}

std::vector<AllreduceSample> probeAllreduce(MPI_Comm comm, const std::vector<double>& bytes, int repetitions) {
  std::vector<AllreduceSample> samples;
  for (double size : bytes) {
    std::vector<float> buffer(static_cast<size_t>(std::max(1.0, size / sizeof(float))), 1.0f);
    const int count = static_cast<int>(buffer.size());
    mpi::checkMpi(MPI_Allreduce(MPI_IN_PLACE, buffer.data(), count, MPI_FLOAT, MPI_SUM, comm), "MPI_Allreduce (warm-up)");
    double best = std::numeric_limits<double>::infinity();
    for (int r = 0; r < std::max(1, repetitions); ++r) {
      mpi::checkMpi(MPI_Barrier(comm), "MPI_Barrier");
      const double start = MPI_Wtime();
      mpi::checkMpi(MPI_Allreduce(MPI_IN_PLACE, buffer.data(), count, MPI_FLOAT, MPI_SUM, comm), "MPI_Allreduce");
      double elapsed = MPI_Wtime() - start, slowest = 0;
      mpi::checkMpi(MPI_Allreduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce (timing)");
      best = std::min(best, slowest);
    }
    samples.push_back({static_cast<double>(count) * sizeof(float), best});
  }
  return samples;
}

}  // namespace medseg::cluster
#endif
