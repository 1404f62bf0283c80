#pragma once
// MPI for the lifetime of a worker process (RAII: MPI_Init_thread .. MPI_Finalize). Serialized
// threading is requested because autograd hooks may post non-blocking reductions from the backward
// pass' thread (on CUDA that is not the main thread); the calls never overlap in time.
#if MEDSEG_HAVE_MPI
#include <mpi.h>

#include <string>

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

// Checks an MPI return code; throws std::runtime_error with MPI's message.
void checkMpi(int code, const char* what);
// This process's rank in comm, and comm's size.
int rankOf(MPI_Comm comm);
int sizeOf(MPI_Comm comm);
// The largest of every rank's `value`, the same answer on all (decisions every rank must share).
int maximumOverRanks(int value, MPI_Comm comm);
// Broadcasts a string from root to every rank of comm (length, then bytes).
std::string broadcastString(const std::string& text, int root, MPI_Comm comm);
void sendString(const std::string& text, int destination, int tag, MPI_Comm comm);
std::string receiveString(int source, int tag, MPI_Comm comm, MPI_Status* status = nullptr);

}  // namespace medseg::cluster
#endif
