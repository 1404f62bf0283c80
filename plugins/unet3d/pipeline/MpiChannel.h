#pragma once
// Pipeline stages on the ranks of an MPI communicator (stage s = rank s). A bundle travels as a
// JSON header (keys, shapes, end flag) followed by each tensor's float32 data (in pieces of at most
// 2^30 values, as MPI counts are int). Sends are non-blocking (MPI_Isend, buffers kept until
// completion), so a 1F1B stage sending an activation while its neighbour sends it a gradient never
// deadlocks; receives block. Messages of one (source, flow, micro-batch) share a tag, and MPI keeps
// their order. CUDA tensors are staged through host memory.
#if MEDSEG_HAVE_MPI
#include <mpi.h>

#include <list>
#include <string>

#include "plugins/unet3d/pipeline/PipelineChannel.h"

namespace medseg::unet3d {

class MpiChannel : public PipelineChannel {
 public:
  // device: where received tensors are put (this rank's stage device).
  MpiChannel(MPI_Comm comm, torch::Device device);
  ~MpiChannel() override;
  MpiChannel(const MpiChannel&) = delete;
  MpiChannel& operator=(const MpiChannel&) = delete;

  void send(int from, int to, Flow flow, int64_t micro, const ActivationBundle& bundle) override;
  std::optional<ActivationBundle> receive(int from, int to, Flow flow, int64_t micro) override;
  void flush() override;
  std::vector<double> sumOverProcesses(std::vector<double> values) override;
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  struct PendingSend {
    std::string header;
    std::vector<torch::Tensor> buffers;
    std::vector<MPI_Request> requests;
  };
  int tagOf(Flow flow, int64_t micro) const;
  void reapCompleted();

  MPI_Comm comm_;
  torch::Device device_;
  int rank_ = 0, size_ = 1;
  std::list<PendingSend> pending_;
};

}  // namespace medseg::unet3d
#endif
