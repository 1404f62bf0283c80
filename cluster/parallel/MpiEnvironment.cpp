#include "cluster/parallel/MpiEnvironment.h"

#include "cluster/parallel/DevicePlacement.h"

#if MEDSEG_HAVE_MPI
#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <vector>

namespace medseg::cluster {

MpiEnvironment::MpiEnvironment(int* argc, char*** argv) {
  checkMpi(MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided_), "MPI_Init_thread");
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

void checkMpi(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char message[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, message, &length);
  throw std::runtime_error(std::string(what) + " failed: " + std::string(message, static_cast<size_t>(length)));
}

std::string broadcastString(const std::string& text, int root, MPI_Comm comm) {
  unsigned long long length = text.size();
  checkMpi(MPI_Bcast(&length, 1, MPI_UNSIGNED_LONG_LONG, root, comm), "MPI_Bcast");
  std::string out = text;
  out.resize(length);
  if (length) checkMpi(MPI_Bcast(out.data(), static_cast<int>(length), MPI_CHAR, root, comm), "MPI_Bcast");
  return out;
}

void sendString(const std::string& text, int destination, int tag, MPI_Comm comm) {
  checkMpi(MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, destination, tag, comm), "MPI_Send");
}

std::string receiveString(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  MPI_Status probed;
  checkMpi(MPI_Probe(source, tag, comm, &probed), "MPI_Probe");
  int count = 0;
  MPI_Get_count(&probed, MPI_CHAR, &count);
  std::string text(static_cast<size_t>(count), '\0');
  MPI_Status received;
  checkMpi(MPI_Recv(text.data(), count, MPI_CHAR, probed.MPI_SOURCE, probed.MPI_TAG, comm, &received), "MPI_Recv");
  if (status) *status = received;
  return text;
}

int rankOf(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

int sizeOf(MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  return size;
}

int maximumOverRanks(int value, MPI_Comm comm) {
  int agreed = 0;
  checkMpi(MPI_Allreduce(&value, &agreed, 1, MPI_INT, MPI_MAX, comm), "MPI_Allreduce (agree)");
  return agreed;
}

}  // namespace medseg::cluster
#endif
