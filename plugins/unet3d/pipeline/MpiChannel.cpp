#include "plugins/unet3d/pipeline/MpiChannel.h"

#if MEDSEG_HAVE_MPI
#include <chrono>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/mpi/MpiMessages.h"
#include "core/util/Elapsed.h"
#include "plugins/unet3d/parallel/MpiTensorTypes.h"

namespace medseg::unet3d {
namespace {

constexpr int64_t kPieceElements = int64_t{1} << 30;

}  // namespace

MpiChannel::MpiChannel(MPI_Comm comm, torch::Device device) : comm_(comm), device_(device) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

MpiChannel::~MpiChannel() {
  try {
    flush();
  } catch (...) {
    // MPI is being torn down after an error elsewhere; nothing more can be done here.
  }
}

int MpiChannel::tagOf(Flow flow, int64_t micro) const {
  // 4 flows per micro-batch; the MPI standard guarantees tags up to 32767.
  const int64_t tag = micro * 4 + static_cast<int64_t>(flow);
  if (tag > 32767) throw std::invalid_argument("pipeline: at most 8191 micro-batches per step");
  return static_cast<int>(tag);
}

void MpiChannel::send(int from, int to, Flow flow, int64_t micro, const ActivationBundle& bundle) {
  if (from != rank_) throw std::logic_error("MpiChannel: rank " + std::to_string(rank_) + " cannot send as stage " + std::to_string(from));
  const auto start = std::chrono::steady_clock::now();
  const int tag = tagOf(flow, micro);
  PendingSend message;
  nlohmann::json header = {{"end", bundle.end}, {"tensors", nlohmann::json::array()}};
  for (const auto& [key, tensor] : bundle.tensors) {
    const torch::ScalarType type = wireType(tensor.scalar_type());
    header["tensors"].push_back({{"key", key}, {"shape", tensor.sizes().vec()}, {"dtype", type == torch::kDouble ? "float64" : "float32"}});
    message.buffers.push_back(tensor.detach().to(torch::kCPU, type).contiguous());
  }
  message.header = header.dump();
  pending_.push_back(std::move(message));
  PendingSend& posted = pending_.back();
  auto post = [&](void* data, int64_t count, MPI_Datatype type) {
    MPI_Request request;
    mpi::checkMpi(MPI_Isend(data, static_cast<int>(count), type, to, tag, comm_, &request), "MPI_Isend (pipeline)");
    posted.requests.push_back(request);
  };
  post(posted.header.data(), static_cast<int64_t>(posted.header.size()), MPI_CHAR);
  for (auto& buffer : posted.buffers) {
    auto* data = static_cast<char*>(buffer.data_ptr());
    const int64_t size = buffer.element_size();
    for (int64_t offset = 0; offset < buffer.numel(); offset += kPieceElements)
      post(data + offset * size, std::min(kPieceElements, buffer.numel() - offset), mpiTypeOf(buffer.scalar_type()));
    bytesSent_ += buffer.numel() * size;
  }
  reapCompleted();
  secondsBlocked_ += secondsSince(start);
}

std::optional<ActivationBundle> MpiChannel::receive(int from, int to, Flow flow, int64_t micro) {
  if (to != rank_) throw std::logic_error("MpiChannel: rank " + std::to_string(rank_) + " cannot receive as stage " + std::to_string(to));
  const auto start = std::chrono::steady_clock::now();
  const int tag = tagOf(flow, micro);
  const auto header = nlohmann::json::parse(mpi::receiveString(from, tag, comm_));
  ActivationBundle bundle;
  bundle.end = header.at("end").get<bool>();
  for (const auto& entry : header.at("tensors")) {
    const torch::ScalarType type = entry.value("dtype", "float32") == "float64" ? torch::kDouble : torch::kFloat;
    auto tensor = torch::empty(entry.at("shape").get<std::vector<int64_t>>(), type);
    auto* data = static_cast<char*>(tensor.data_ptr());
    const int64_t size = tensor.element_size();
    for (int64_t offset = 0; offset < tensor.numel(); offset += kPieceElements)
      mpi::checkMpi(MPI_Recv(data + offset * size, static_cast<int>(std::min(kPieceElements, tensor.numel() - offset)), mpiTypeOf(type),
                        from, tag, comm_, MPI_STATUS_IGNORE),
               "MPI_Recv (pipeline)");
    bundle.tensors[entry.at("key").get<std::string>()] = device_.is_cpu() ? tensor : tensor.to(device_);
  }
  secondsBlocked_ += secondsSince(start);
  return bundle;
}

void MpiChannel::reapCompleted() {
  for (auto it = pending_.begin(); it != pending_.end();) {
    int done = 0;
    mpi::checkMpi(MPI_Testall(static_cast<int>(it->requests.size()), it->requests.data(), &done, MPI_STATUSES_IGNORE),
             "MPI_Testall (pipeline)");
    it = done ? pending_.erase(it) : std::next(it);
  }
}

void MpiChannel::flush() {
  const auto start = std::chrono::steady_clock::now();
  for (auto& message : pending_)
    mpi::checkMpi(MPI_Waitall(static_cast<int>(message.requests.size()), message.requests.data(), MPI_STATUSES_IGNORE),
             "MPI_Waitall (pipeline)");
  pending_.clear();
  secondsBlocked_ += secondsSince(start);
}

std::vector<double> MpiChannel::sumOverProcesses(std::vector<double> values) {
  mpi::checkMpi(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_SUM, comm_),
           "MPI_Allreduce (pipeline)");
  return values;
}

}  // namespace medseg::unet3d
#endif
