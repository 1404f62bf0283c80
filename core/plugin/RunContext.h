#pragma once
// What a host gives a plugin for one run: where to report (log lines, progress, metric events: the
// Reporter that prints for people or writes the JSON lines the studio and cluster jobs read),
// whether the user asked to stop (Ctrl-C, SIGTERM, the studio's Stop, a Slurm time limit), and the
// parallel job the run is part of. No Qt in it: a plugin runs the same in the studio's child
// process, on the command line and on cluster nodes.
#include <cstdint>
#include <functional>
#include <string>

#include "core/util/Progress.h"

namespace medseg::plugin {

// The MPI job a run belongs to (one process: rank 0 of 1, no communicator). mpiCommunicator points
// to an MPI_Comm of the host's MPI (Open MPI 4.1 here), valid for the call; plugins that declare
// data_parallel or pipeline use it for their collectives. Ranks of one run share node cores: threads
// is each rank's share.
struct ParallelContext {
  int rank = 0, size = 1;            // in the communicator
  int localRank = 0, localSize = 1;  // on this node
  int globalRank = 0;                // in the whole job (logs), when the communicator is a group of it
  const void* mpiCommunicator = nullptr;
  bool distributed() const { return mpiCommunicator != nullptr; }
};

class RunContext {
 public:
  explicit RunContext(Reporter& reporter) : reporter_(reporter) {}

  Reporter& reporter() { return reporter_; }
  bool json() const { return reporter_.json(); }
  void log(const std::string& message) { reporter_.log(message); }
  // Progress of the work in hand (a case's windows): the host draws it as its own bar.
  void progress(int64_t done, int64_t total) const {
    if (onProgress_) onProgress_(done, total);
  }
  void setProgressHandler(std::function<void(int64_t done, int64_t total)> handler) { onProgress_ = std::move(handler); }

  // True once a stop was asked for; long loops check it at safe points and end cleanly.
  bool cancelRequested() const;
  // Throws medseg::Interrupted (exit code 130 in the host) when a stop was asked for.
  void throwIfCancelled(const char* where) const;

  const ParallelContext& parallel() const { return parallel_; }
  void setParallel(const ParallelContext& parallel) { parallel_ = parallel; }

 private:
  Reporter& reporter_;
  std::function<void(int64_t, int64_t)> onProgress_;
  ParallelContext parallel_;
};

}  // namespace medseg::plugin
