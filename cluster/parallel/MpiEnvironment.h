#pragma once
// MPI for the lifetime of a worker process (RAII: MPI_Init_thread .. MPI_Finalize). Serialized
// threading is requested because autograd hooks may post non-blocking reductions from the backward
// pass' thread (on CUDA that is not the main thread); the calls never overlap in time.
#if MEDSEG_HAVE_MPI
#include "core/mpi/MpiMessages.h"

namespace medseg::cluster {

class MpiEnvironment {
 public:
  MpiEnvironment(int* argc, char*** argv);
  ~MpiEnvironment();
  MpiEnvironment(const MpiEnvironment&) = delete;
  MpiEnvironment& operator=(const MpiEnvironment&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }
  bool threadSerialized() const { return provided_ >= MPI_THREAD_SERIALIZED; }
  // Ranks on this node (MPI_COMM_TYPE_SHARED), for one GPU per local rank and thread budgets.
  int localRank() const { return localRank_; }
  int localSize() const { return localSize_; }

 private:
  int rank_ = 0, size_ = 1, provided_ = 0, localRank_ = 0, localSize_ = 1;
};

}  // namespace medseg::cluster
#endif
