#include "plugins/unet3d/pipeline/PipelineEngine.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/util/Elapsed.h"
#include "plugins/unet3d/train/Optimizer.h"
#include "plugins/unet3d/train/Schedule.h"
#include "plugins/unet3d/train/Targets.h"
#include "plugins/unet3d/train/TrainingEngine.h"
#include "core/util/Interrupt.h"

namespace medseg::unet3d {
namespace {

// Reserved micro-batch index for collecting weights on stage 0 (below MpiChannel's tag limit).
constexpr int64_t kGatherMicro = 8000;

struct StepData {
  std::vector<torch::Tensor> images, targets;
  bool allHeads = false;
  MicroBatchLoss loss;
  double lossSum = 0.0;
};

// Walks one stage through its op list; advance() runs the next op when its input has arrived.
class StageRunner {
 public:
  StageRunner(PipelineStage& stage, std::vector<PipelineOp> ops) : stage_(stage), ops_(std::move(ops)) {}
  bool done() const { return next_ >= ops_.size(); }

  bool advance(PipelineChannel& channel, StepData& data) {
    if (done()) return false;
    const PipelineOp op = ops_[next_];
    const int s = stage_.index();
    if (op.kind == PipelineOp::Forward) {
      ActivationBundle input;
      if (stage_.first()) {
        input = networkInput(data.images.at(static_cast<size_t>(op.micro)));
      } else {
        auto received = channel.receive(s - 1, s, Flow::Activation, op.micro);
        if (!received) return false;
        input = std::move(*received);
      }
      const ActivationBundle output = stage_.forward(op.micro, input, data.allHeads);
      if (!stage_.last()) channel.send(s, s + 1, Flow::Activation, op.micro, output);
    } else {
      ActivationBundle gradients;
      if (stage_.last()) {
        double value = 0.0;
        gradients = stage_.backwardFromLoss(op.micro, data.loss, &value);
        data.lossSum += value;
      } else {
        auto received = channel.receive(s + 1, s, Flow::Gradient, op.micro);
        if (!received) return false;
        gradients = stage_.backward(op.micro, *received);
      }
      if (!stage_.first()) channel.send(s, s - 1, Flow::Gradient, op.micro, gradients);
    }
    ++next_;
    return true;
  }

 private:
  PipelineStage& stage_;
  std::vector<PipelineOp> ops_;
  size_t next_ = 0;
};

std::vector<torch::Tensor> microBatches(const torch::Tensor& tensor, int64_t count) {
  std::vector<torch::Tensor> out;
  const int64_t size = tensor.size(0) / count;
  for (int64_t m = 0; m < count; ++m) out.push_back(tensor.narrow(0, m * size, size));
  return out;
}

}  // namespace

PipelineEngine::PipelineEngine(const TrainConfig& config, const PipelinePlan& plan, std::vector<int> localStages,
                               std::vector<torch::Device> devices, std::unique_ptr<PipelineChannel> channel)
    : config_(config), plan_(plan), channel_(std::move(channel)), loss_(config.loss, config.targets) {
  if (localStages.size() != devices.size()) throw std::invalid_argument("PipelineEngine: one device per local stage");
  network_ = buildNetwork(config);  // as TrainingEngine: the same initial weights as a single process
  blocks_ = unetBlocks(network_->config());
  plan_.validate(blocks_.size());
  for (size_t i = 0; i < localStages.size(); ++i) {
    const int s = localStages[i];
    stages_.emplace_back(network_, plan_.blocksOf(blocks_, s), s, plan_.stages(), devices[i], plan_.checkpoint);
    optimizers_.push_back(makeOptimizer(config.optimizer, stages_.back().parameters()));
  }
}

PipelineStage* PipelineEngine::localStage(int index) {
  for (auto& stage : stages_)
    if (stage.index() == index) return &stage;
  return nullptr;
}

bool PipelineEngine::runsFirstStage() const {
  for (const auto& stage : stages_)
    if (stage.first()) return true;
  return false;
}

StepStats PipelineEngine::step(const Batch& batch) {
  const auto start = std::chrono::steady_clock::now();
  const int64_t samples = batch.image.defined() ? batch.image.size(0) : batch.target.size(0);
  const int64_t M = plan_.microBatches;
  if (samples % M != 0)
    throw InputError("pipeline: batch_size " + std::to_string(samples) + " is not a multiple of the " + std::to_string(M) +
                     " micro-batches");
  StepStats stats;
  stats.step = step_;
  stats.voxels = batch.voxels();
  stats.learningRate = scheduledLearningRate(config_.schedule, config_.optimizer.lr, step_, config_.totalSteps());
  network_->train();
  for (auto& optimizer : optimizers_) {
    setLearningRate(*optimizer, stats.learningRate);
    optimizer->zero_grad();
  }
  StepData data;
  data.allHeads = config_.network.deepSupervision;
  const Batch cast = batch.to(torch::kCPU, config_.scalarType());  // stages move their inputs to their devices
  if (runsFirstStage()) data.images = microBatches(cast.image, M);
  if (localStage(plan_.stages() - 1)) {
    data.targets = microBatches(cast.target, M);
    torch::Device device = localStage(plan_.stages() - 1)->device();
    data.loss = [&, device](int64_t micro, const std::vector<torch::Tensor>& outputs) {
      const auto target = data.targets.at(static_cast<size_t>(micro)).to(device);
      return loss_(outputs, multiScaleTargets(target, config_.targets, outputs.size())) / static_cast<double>(M);
    };
  }
  std::vector<StageRunner> runners;
  for (auto& stage : stages_) runners.emplace_back(stage, stageOps(plan_.schedule, stage.index(), plan_.stages(), M));
  for (bool all = false; !all;) {
    bool progress = false;
    all = true;
    for (auto& runner : runners) {
      while (runner.advance(*channel_, data)) progress = true;
      all = all && runner.done();
    }
    if (!all && !progress) throw std::logic_error("pipeline schedule is stuck: no stage can run its next operation");
  }
  channel_->flush();

  // The gradient norm over every stage, as clip_grad_norm_ over the whole network would compute it.
  double squares = 0.0;
  for (auto& stage : stages_)
    for (const auto& p : stage.parameters())
      if (p.grad().defined()) squares += p.grad().to(torch::kDouble).pow(2).sum().item<double>();
  const auto sums = channel_->sumOverProcesses({squares, data.lossSum});
  stats.gradNorm = std::sqrt(sums[0]);
  stats.loss = sums[1];
  if (!std::isfinite(stats.loss))
    throw std::runtime_error("pipeline training diverged at step " + std::to_string(step_) +
                             " (loss is not finite); lower optimizer.lr or enable optimizer.grad_clip");
  const double clip = config_.optimizer.gradClip > 0 ? config_.optimizer.gradClip : std::numeric_limits<double>::infinity();
  const double coefficient = clip / (stats.gradNorm + 1e-6);
  if (coefficient < 1.0) {
    torch::NoGradGuard noGrad;
    for (auto& stage : stages_)
      for (auto& p : stage.parameters())
        if (p.grad().defined()) p.grad().mul_(coefficient);
  }
  for (auto& optimizer : optimizers_) optimizer->step();
  ++step_;
  stats.seconds = secondsSince(start);
  return stats;
}

torch::Tensor PipelineEngine::infer(const torch::Tensor& input) {
  if (!runsFirstStage()) throw std::logic_error("pipeline inference is driven from the process of stage 0");
  torch::NoGradGuard noGrad;
  const torch::Tensor images = input.to(config_.scalarType());
  network_->eval();
  const int K = plan_.stages();
  std::vector<torch::Tensor> logits;
  if (static_cast<int>(stages_.size()) == K) {  // every stage here: hand each sample down the devices
    for (int64_t n = 0; n < images.size(0); ++n) {
      ActivationBundle bundle = networkInput(images.narrow(0, n, 1));
      for (auto& stage : stages_) bundle = stage.infer(bundle);
      logits.push_back(bundle.at(ActivationBundle::headKey(0)).to(torch::kCPU));
    }
  } else {
    PipelineStage& first = stages_.front();
    // Post every sample first, then collect: stage 0 works on sample n+1 while later stages run n.
    for (int64_t n = 0; n < images.size(0); ++n)
      channel_->send(0, 1, Flow::Inference, 0, first.infer(networkInput(images.narrow(0, n, 1))));
    for (int64_t n = 0; n < images.size(0); ++n) {
      auto result = channel_->receive(K - 1, 0, Flow::Result, 0);
      logits.push_back(result->at(ActivationBundle::headKey(0)));
    }
    channel_->flush();
  }
  network_->train();
  return torch::cat(logits, 0);
}

void PipelineEngine::serveInference() {
  if (runsFirstStage() || stages_.empty()) return;
  torch::NoGradGuard noGrad;
  network_->eval();
  PipelineStage& stage = stages_.front();
  const int s = stage.index();
  for (;;) {
    ActivationBundle input = *channel_->receive(s - 1, s, Flow::Inference, 0);
    if (input.end) {
      if (!stage.last()) channel_->send(s, s + 1, Flow::Inference, 0, input);
      break;
    }
    ActivationBundle output = stage.infer(input);
    channel_->send(s, stage.last() ? 0 : s + 1, stage.last() ? Flow::Result : Flow::Inference, 0, output);
  }
  channel_->flush();
  network_->train();
}

void PipelineEngine::finishInference() {
  if (!runsFirstStage() || static_cast<int>(stages_.size()) == plan_.stages()) return;
  ActivationBundle end;
  end.end = true;
  channel_->send(0, 1, Flow::Inference, 0, end);
  channel_->flush();
}

std::map<std::string, torch::Tensor> PipelineEngine::gatherToFirst(bool withGradients) {
  auto collect = [&](const PipelineStage& stage) {
    ActivationBundle bundle;
    const auto names = stage.parameterNames();
    const auto params = stage.parameters();
    for (size_t i = 0; i < names.size(); ++i) {
      bundle.tensors[names[i]] = params[i].detach();
      if (withGradients) {
        const auto grad = params[i].grad();
        bundle.tensors["grad:" + names[i]] = grad.defined() ? grad.detach() : torch::zeros_like(params[i]);
      }
    }
    return bundle;
  };
  std::map<std::string, torch::Tensor> out;
  const bool here = runsFirstStage();
  for (auto& stage : stages_) {
    if (here) {
      for (auto& [key, tensor] : collect(stage).tensors) out[key] = tensor.to(torch::kCPU);
    } else {
      channel_->send(stage.index(), 0, Flow::Result, kGatherMicro, collect(stage));
    }
  }
  if (here)
    for (int s = 0; s < plan_.stages(); ++s) {
      if (localStage(s)) continue;
      auto received = channel_->receive(s, 0, Flow::Result, kGatherMicro);
      for (auto& [key, tensor] : received->tensors) out[key] = tensor;
    }
  channel_->flush();
  return out;
}

void PipelineEngine::loadWeights(UNet3d source) {
  torch::NoGradGuard noGrad;
  auto from = source->named_parameters();
  for (auto& item : network_->named_parameters()) {
    const auto* value = from.find(item.key());
    if (!value) throw InputError("the model has no parameter " + item.key() + ": it is not this network configuration");
    if (value->sizes() != item.value().sizes())
      throw InputError("the model's parameter " + item.key() + " has another shape than this network configuration's");
    item.value().copy_(*value);
  }
  auto buffers = source->named_buffers();
  for (auto& item : network_->named_buffers())
    if (const auto* value = buffers.find(item.key())) item.value().copy_(*value);
}

UNet3d PipelineEngine::gatherNetwork() {
  const auto weights = gatherToFirst(false);
  if (!runsFirstStage()) return nullptr;
  UNet3d copy(config_.network);
  copy->to(config_.scalarType());
  torch::NoGradGuard noGrad;
  for (auto& item : copy->named_parameters()) {
    const auto found = weights.find(item.key());
    if (found == weights.end()) throw std::logic_error("pipeline: no stage holds parameter " + item.key());
    item.value().copy_(found->second);
  }
  for (auto& item : copy->named_buffers()) {  // batch-norm statistics: this process's copy
    for (auto& own : network_->named_buffers())
      if (own.key() == item.key()) item.value().copy_(own.value().to(torch::kCPU));
  }
  return copy;
}

std::unique_ptr<PipelineEngine> makeLocalPipeline(const TrainConfig& config, const PipelinePlan& plan,
                                                  const std::vector<torch::Device>& devices) {
  if (static_cast<int>(devices.size()) != plan.stages())
    throw InputError("pipeline: " + std::to_string(plan.stages()) + " stages need as many devices, got " +
                     std::to_string(devices.size()));
  std::vector<int> all;
  for (int s = 0; s < plan.stages(); ++s) all.push_back(s);
  return std::make_unique<PipelineEngine>(config, plan, all, devices, std::make_unique<LocalChannel>(devices));
}

}  // namespace medseg::unet3d
