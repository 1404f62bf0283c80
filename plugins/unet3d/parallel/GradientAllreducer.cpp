#include "plugins/unet3d/parallel/GradientAllreducer.h"

#if MEDSEG_HAVE_MPI
#include <chrono>
#include <stdexcept>

#include <torch/csrc/autograd/engine.h>

#include "core/mpi/MpiMessages.h"
#include "core/util/Elapsed.h"
#include "plugins/unet3d/parallel/MpiTensorTypes.h"

#if MEDSEG_HAVE_NCCL
// Only the CUDA runtime and NCCL: reductions go on the legacy default stream, which is also torch's
// default current stream, so they are ordered after backward's kernels and before the optimiser's.
#include <cuda_runtime.h>
#include <nccl.h>
#endif

namespace medseg::unet3d {
namespace {

using Clock = std::chrono::steady_clock;

#if MEDSEG_HAVE_NCCL
// One NCCL communicator per MPI communicator, made once (unique id broadcast over MPI).
ncclComm_t ncclFor(MPI_Comm comm) {
  static std::vector<std::pair<MPI_Comm, ncclComm_t>> made;
  for (const auto& [mpi, nccl] : made)
    if (mpi == comm) return nccl;
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  ncclUniqueId id;
  if (rank == 0 && ncclGetUniqueId(&id) != ncclSuccess) throw std::runtime_error("ncclGetUniqueId failed");
  mpi::checkMpi(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm), "MPI_Bcast (NCCL id)");
  ncclComm_t nccl;
  if (ncclCommInitRank(&nccl, size, id, rank) != ncclSuccess) throw std::runtime_error("ncclCommInitRank failed");
  made.emplace_back(comm, nccl);
  return nccl;
}
#endif

}  // namespace

GradientAllreducer::GradientAllreducer(std::vector<torch::Tensor> parameters, MPI_Comm comm, size_t bucketBytes, bool overlap)
    : parameters_(std::move(parameters)), comm_(comm), overlap_(overlap) {
  MPI_Comm_size(comm_, &worldSize_);
  bucketOf_.assign(parameters_.size(), 0);
  slotOf_.assign(parameters_.size(), 0);
  arrived_.assign(parameters_.size(), false);
  // Reverse registration order approximates the order in which backward produces gradients.
  size_t currentBytes = bucketBytes;  // forces a new bucket for the first parameter
  for (size_t n = parameters_.size(); n-- > 0;) {
    const auto& p = parameters_[n];
    if (!p.requires_grad()) continue;
    if (!type_) type_ = p.scalar_type();
    if (p.scalar_type() != *type_ || (*type_ != torch::kFloat && *type_ != torch::kDouble))
      throw std::runtime_error("data-parallel training reduces float32 or float64 parameters of one type; found " +
                               std::string(toString(*type_)) + " and " + toString(p.scalar_type()));
    const size_t bytes = static_cast<size_t>(p.numel() * p.element_size());
    if (currentBytes + bytes > bucketBytes && currentBytes > 0) {
      buckets_.emplace_back();
      currentBytes = 0;
    }
    Bucket& bucket = buckets_.back();
    bucketOf_[n] = buckets_.size() - 1;
    slotOf_[n] = bucket.parameters.size();
    bucket.offsets.push_back(bucket.parameters.empty() ? 0 : bucket.offsets.back() + parameters_[bucket.parameters.back()].numel());
    bucket.parameters.push_back(n);
    currentBytes += bytes;
    stats_.bytes += bytes;
  }
  for (auto& bucket : buckets_) {
    const auto& last = parameters_[bucket.parameters.back()];
    const int64_t elements = bucket.offsets.back() + last.numel();
    auto device = last.device();
#if !MEDSEG_HAVE_NCCL
    device = torch::kCPU;  // MPI reduces host memory
#endif
    bucket.buffer = torch::zeros({elements}, torch::TensorOptions().dtype(*type_).device(device));
  }
  stats_.buckets = buckets_.size();
  for (size_t n = 0; n < parameters_.size(); ++n) {
    if (!parameters_[n].requires_grad()) continue;
    hookHandles_.push_back(parameters_[n].register_hook([this, n](torch::Tensor gradient) { onGradient(n, gradient); }));
  }
}

GradientAllreducer::~GradientAllreducer() {
  size_t handle = 0;
  for (size_t n = 0; n < parameters_.size(); ++n)
    if (parameters_[n].requires_grad()) parameters_[n].remove_hook(hookHandles_[handle++]);
  for (auto& bucket : buckets_)
    if (bucket.posted && bucket.request != MPI_REQUEST_NULL) MPI_Wait(&bucket.request, MPI_STATUS_IGNORE);
}

void GradientAllreducer::onGradient(size_t parameter, const torch::Tensor& gradient) {
  if (!callbackQueued_) {
    // Runs once every gradient of this backward pass has been accumulated.
    torch::autograd::Engine::get_default_engine().queue_callback([this] { finish(); });
    callbackQueued_ = true;
  }
  Bucket& bucket = buckets_[bucketOf_[parameter]];
  const auto& p = parameters_[parameter];
  bucket.buffer.narrow(0, bucket.offsets[slotOf_[parameter]], p.numel()).copy_(gradient.reshape({-1}));
  arrived_[parameter] = true;
  ++bucket.ready;
  if (overlap_) postReadyBuckets(false);
}

void GradientAllreducer::post(Bucket& bucket) {
  const auto start = Clock::now();
  // Parameters that got no gradient this step (unused branches) contribute zeros, as on every rank.
  if (bucket.ready < bucket.parameters.size())
    for (size_t slot = 0; slot < bucket.parameters.size(); ++slot)
      if (!arrived_[bucket.parameters[slot]])
        bucket.buffer.narrow(0, bucket.offsets[slot], parameters_[bucket.parameters[slot]].numel()).zero_();
#if MEDSEG_HAVE_NCCL
  if (bucket.buffer.is_cuda()) {
    const ncclDataType_t type = bucket.buffer.scalar_type() == torch::kDouble ? ncclDouble : ncclFloat;
    if (ncclAllReduce(bucket.buffer.data_ptr(), bucket.buffer.data_ptr(), bucket.buffer.numel(), type,
                      ncclSum, ncclFor(comm_), cudaStreamLegacy) != ncclSuccess)
      throw std::runtime_error("ncclAllReduce failed");
    bucket.posted = true;
    stepBlocked_ += secondsSince(start);
    return;
  }
#endif
  mpi::checkMpi(MPI_Iallreduce(MPI_IN_PLACE, bucket.buffer.data_ptr(), static_cast<int>(bucket.buffer.numel()),
                          mpiTypeOf(bucket.buffer.scalar_type()),
                          MPI_SUM, comm_, &bucket.request),
           "MPI_Iallreduce");
  bucket.posted = true;
  stepBlocked_ += secondsSince(start);
}

void GradientAllreducer::postReadyBuckets(bool all) {
  while (nextToPost_ < buckets_.size()) {
    Bucket& bucket = buckets_[nextToPost_];
    if (!all && bucket.ready < bucket.parameters.size()) break;
    post(bucket);
    ++nextToPost_;
  }
}

void GradientAllreducer::finish() {
  postReadyBuckets(true);
  const auto start = Clock::now();
  const double scale = 1.0 / static_cast<double>(worldSize_);
#if MEDSEG_HAVE_NCCL
  bool onGpu = false;
  for (const auto& bucket : buckets_) onGpu = onGpu || bucket.buffer.is_cuda();
  if (onGpu) cudaStreamSynchronize(cudaStreamLegacy);  // so the blocked time includes the reductions
#endif
  for (auto& bucket : buckets_) {
    if (bucket.request != MPI_REQUEST_NULL) mpi::checkMpi(MPI_Wait(&bucket.request, MPI_STATUS_IGNORE), "MPI_Wait");
    bucket.buffer.mul_(scale);
    for (size_t slot = 0; slot < bucket.parameters.size(); ++slot) {
      auto& p = parameters_[bucket.parameters[slot]];
      auto average = bucket.buffer.narrow(0, bucket.offsets[slot], p.numel()).view(p.sizes());
      if (!p.grad().defined())
        p.mutable_grad() = average.to(p.device()).clone();
      else
        p.mutable_grad().copy_(average);
    }
    bucket.ready = 0;
    bucket.posted = false;
    bucket.request = MPI_REQUEST_NULL;
  }
  std::fill(arrived_.begin(), arrived_.end(), false);
  nextToPost_ = 0;
  callbackQueued_ = false;
  stepBlocked_ += secondsSince(start);
  stats_.lastBlockedSeconds = stepBlocked_;
  stats_.blockedSeconds += stepBlocked_;
  stepBlocked_ = 0.0;
  ++stats_.steps;
}

void broadcastModule(torch::nn::Module& module, int root, MPI_Comm comm) {
  torch::NoGradGuard noGrad;
  auto broadcast = [&](torch::Tensor tensor) {
    if (!tensor.defined() || tensor.numel() == 0) return;
    auto host = tensor.to(torch::kCPU).contiguous();
    MPI_Datatype type = MPI_BYTE;
    int count = static_cast<int>(host.numel() * host.element_size());
    mpi::checkMpi(MPI_Bcast(host.data_ptr(), count, type, root, comm), "MPI_Bcast (weights)");
    tensor.copy_(host);
  };
  for (auto& p : module.parameters()) broadcast(p);
  for (auto& b : module.buffers()) broadcast(b);
}

std::vector<double> allreduceSum(std::vector<double> values, MPI_Comm comm) {
  if (!values.empty())
    mpi::checkMpi(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_SUM, comm),
             "MPI_Allreduce");
  return values;
}

}  // namespace medseg::unet3d
#endif
