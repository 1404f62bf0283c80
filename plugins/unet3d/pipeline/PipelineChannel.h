#pragma once
// How pipeline stages hand bundles to each other, so one schedule implementation serves both
// placements: stages on MPI ranks (MpiChannel: point-to-point messages, receive blocks until the
// message is there) and stages on several devices of one process (LocalChannel: a mailbox, tensors
// moved with .to(device); receive returns nothing when the message has not been sent yet).
#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include <torch/torch.h>

#include "plugins/unet3d/pipeline/ActivationBundle.h"

namespace medseg::unet3d {

enum class Flow : int {
  Activation = 0,  // stage s -> s+1, training forward
  Gradient = 1,    // stage s+1 -> s, training backward
  Inference = 2,   // stage s -> s+1, inference forward
  Result = 3,      // last stage -> stage 0, inference logits
};

class PipelineChannel {
 public:
  virtual ~PipelineChannel() = default;
  virtual void send(int from, int to, Flow flow, int64_t micro, const ActivationBundle& bundle) = 0;
  virtual std::optional<ActivationBundle> receive(int from, int to, Flow flow, int64_t micro) = 0;
  // Completes every send still in flight (MPI: waits for non-blocking sends).
  virtual void flush() {}
  // Sum of `values` over every process of the pipeline (one process: the values themselves).
  virtual std::vector<double> sumOverProcesses(std::vector<double> values) { return values; }
  // Bytes sent, and seconds spent in sends/receives (waiting for the other stage included).
  int64_t bytesSent() const { return bytesSent_; }
  double secondsBlocked() const { return secondsBlocked_; }

 protected:
  int64_t bytesSent_ = 0;
  double secondsBlocked_ = 0.0;
};

// Stages on devices of one process: bundles are moved to the receiving stage's device on send.
class LocalChannel : public PipelineChannel {
 public:
  explicit LocalChannel(std::vector<torch::Device> stageDevices) : devices_(std::move(stageDevices)) {}
  void send(int from, int to, Flow flow, int64_t micro, const ActivationBundle& bundle) override;
  std::optional<ActivationBundle> receive(int from, int to, Flow flow, int64_t micro) override;

 private:
  std::vector<torch::Device> devices_;
  std::map<std::tuple<int, int, int, int64_t>, std::vector<ActivationBundle>> mailbox_;
};

}  // namespace medseg::unet3d
