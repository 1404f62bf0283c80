#pragma once
// Data-parallel gradient averaging, overlapped with the backward pass (the scheme of PyTorch DDP):
// parameters are grouped, in reverse order (the order backward produces their gradients), into fused
// buckets of about `bucketBytes`. An autograd hook on every parameter copies its gradient into its
// bucket's flat buffer; when a bucket is complete it is reduced with MPI_Iallreduce(MPI_IN_PLACE,
// MPI_FLOAT, MPI_SUM) while backward continues on earlier layers. A final autograd callback (run
// after every gradient has been accumulated, before backward() returns) waits for the reductions,
// divides by the world size and writes the averages into the parameters' .grad — so any training
// step (TrainingEngine::step: clip, optimiser) sees averaged gradients without knowing about MPI.
// Buckets are posted strictly in index order on every rank, as MPI requires for collectives.
// With a NCCL build and CUDA parameters the reductions run with ncclAllReduce on the GPU instead.
#if MEDSEG_HAVE_MPI
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <torch/torch.h>

namespace medseg::unet3d {

struct AllreduceStats {
  int64_t steps = 0;
  double blockedSeconds = 0.0;   // time spent inside MPI calls (post + wait), summed over steps
  double lastBlockedSeconds = 0.0;
  size_t buckets = 0;
  size_t bytes = 0;              // gradient bytes reduced per step
};

class GradientAllreducer {
 public:
  GradientAllreducer(std::vector<torch::Tensor> parameters, MPI_Comm comm, size_t bucketBytes = 25u << 20,
                     bool overlap = true);
  ~GradientAllreducer();
  GradientAllreducer(const GradientAllreducer&) = delete;
  GradientAllreducer& operator=(const GradientAllreducer&) = delete;

  const AllreduceStats& stats() const { return stats_; }
  int worldSize() const { return worldSize_; }

 private:
  struct Bucket {
    std::vector<size_t> parameters;  // indices into parameters_
    std::vector<int64_t> offsets;    // element offset of each parameter in the buffer
    torch::Tensor buffer;            // flat, the parameters' dtype (float32 or float64), CPU (MPI) or device (NCCL)
    size_t ready = 0;
    bool posted = false;
    MPI_Request request = MPI_REQUEST_NULL;
  };

  void onGradient(size_t parameter, const torch::Tensor& gradient);
  void postReadyBuckets(bool all);
  void post(Bucket& bucket);
  void finish();

  std::vector<torch::Tensor> parameters_;
  std::optional<torch::ScalarType> type_;  // of every parameter
  std::vector<size_t> bucketOf_, slotOf_;
  std::vector<bool> arrived_;
  std::vector<Bucket> buckets_;
  std::vector<unsigned> hookHandles_;
  MPI_Comm comm_;
  int worldSize_ = 1;
  bool overlap_;
  bool callbackQueued_ = false;
  size_t nextToPost_ = 0;
  double stepBlocked_ = 0.0;
  AllreduceStats stats_;
};

// Copies rank `root`'s parameters and buffers (batch-norm statistics) to every rank, so all ranks
// start from identical weights.
void broadcastModule(torch::nn::Module& module, int root, MPI_Comm comm);
// Sum of a few doubles over comm (losses, Dice sums, counters).
std::vector<double> allreduceSum(std::vector<double> values, MPI_Comm comm);

}  // namespace medseg::unet3d
#endif
