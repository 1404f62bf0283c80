#include <chrono>
#include <stdexcept>

#include "core/util/Elapsed.h"
#include "plugins/unet3d/pipeline/PipelineChannel.h"

namespace medseg::unet3d {

void LocalChannel::send(int from, int to, Flow flow, int64_t micro, const ActivationBundle& bundle) {
  if (to < 0 || to >= static_cast<int>(devices_.size())) throw std::out_of_range("pipeline: no stage " + std::to_string(to));
  const auto start = std::chrono::steady_clock::now();
  // Detached: the receiving stage builds its own graph from leaves, as it would from an MPI message.
  ActivationBundle moved = bundle.to(devices_[static_cast<size_t>(to)]).leaves(false);
  bytesSent_ += bundle.bytes();
  mailbox_[{from, to, static_cast<int>(flow), micro}].push_back(std::move(moved));
  secondsBlocked_ += secondsSince(start);
}

std::optional<ActivationBundle> LocalChannel::receive(int from, int to, Flow flow, int64_t micro) {
  const auto found = mailbox_.find({from, to, static_cast<int>(flow), micro});
  if (found == mailbox_.end() || found->second.empty()) return std::nullopt;
  ActivationBundle bundle = std::move(found->second.front());
  found->second.erase(found->second.begin());
  if (found->second.empty()) mailbox_.erase(found);
  return bundle;
}

}  // namespace medseg::unet3d
