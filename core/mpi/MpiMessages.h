#pragma once
// The small MPI helpers that every component running collectives shares: error checks, rank and size
// of a communicator, an agreed maximum, strings sent and broadcast. Part of the SDK layer (library
// medseg_mpi, built from core/mpi as medseg_pacs is from core/pacs), so plugins that run MPI
// collectives (unet3d's data and model parallelism) depend on core only; the process's MPI lifetime
// and device placement stay in cluster/ (cluster/parallel/MpiEnvironment.h).
#if MEDSEG_HAVE_MPI
#include <mpi.h>

#include <string>

namespace medseg::mpi {

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

}  // namespace medseg::mpi
#endif
