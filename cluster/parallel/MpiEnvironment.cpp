#include "cluster/parallel/MpiEnvironment.h"

#include "cluster/parallel/DevicePlacement.h"

#if MEDSEG_HAVE_MPI
#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <vector>

namespace medseg::cluster {

MpiEnvironment::MpiEnvironment(int* argc, char*** argv) {
  mpi::checkMpi(MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided_), "MPI_Init_thread");
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  // The ranks sharing this node's memory are the node's ranks. An MPI that cannot split by node
  // (errors returned, not fatal, for this one call) leaves the launcher's environment to say.
  MPI_Comm local = MPI_COMM_NULL;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int split = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  if (split == MPI_SUCCESS && local != MPI_COMM_NULL) {
    MPI_Comm_rank(local, &localRank_);
    MPI_Comm_size(local, &localSize_);
    MPI_Comm_free(&local);
  } else {
    localRank_ = localRankFromEnvironment().value_or(0);
    const char* size = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    localSize_ = std::max(localRank_ + 1, size ? std::atoi(size) : 1);
  }
}

MpiEnvironment::~MpiEnvironment() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

}  // namespace medseg::cluster
#endif
