#include "core/mpi/MpiMessages.h"

#if MEDSEG_HAVE_MPI
#include <stdexcept>

namespace medseg::mpi {

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

}  // namespace medseg::mpi
#endif
