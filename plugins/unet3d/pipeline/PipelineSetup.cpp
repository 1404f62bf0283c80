// Shared set-up of the model-parallel tasks: the stage device of this rank, the plan (profile +
// partition on rank 0, broadcast), the MPI pipeline engine.
#include "plugins/unet3d/pipeline/ModelParallelRun.h"

#if MEDSEG_HAVE_MPI
#include "core/mpi/MpiMessages.h"
#include "plugins/unet3d/pipeline/BlockProfiler.h"
#include "plugins/unet3d/pipeline/MpiChannel.h"
#include "plugins/unet3d/pipeline/PipelinePartitioner.h"
#include "plugins/unet3d/pipeline/PipelineVerification.h"
#include "plugins/unet3d/train/Targets.h"
#include "plugins/unet3d/train/TrainingEngine.h"
#include "core/util/Interrupt.h"

namespace medseg::unet3d {
namespace {

int64_t samplesPerMicroBatch(const TrainConfig& config, int64_t microBatches) {
  if (microBatches < 1 || config.batchSize % microBatches != 0)
    throw InputError("--micro-batches " + std::to_string(microBatches) + " must divide batch_size " + std::to_string(config.batchSize));
  return config.batchSize / microBatches;
}

// The profile of one micro-batch at the training patch (measured on a smaller cube when asked, then scaled).
ModelProfile profileMicroBatch(const TrainConfig& config, const ModelParallelOptions& options) {
  const int64_t samples = samplesPerMicroBatch(config, options.microBatches);
  const auto& p = config.patchSize;
  std::vector<int64_t> shape{samples, config.network.inChannels, p.at(0), p.at(1), p.at(2)};
  if (options.profileEdge > 0) {
    if (options.profileEdge % config.network.sizeDivisor() != 0)
      throw InputError("--profile-edge must be a multiple of " + std::to_string(config.network.sizeDivisor()));
    shape = {samples, config.network.inChannels, options.profileEdge, options.profileEdge, options.profileEdge};
  }
  UNet3d network = buildNetwork(config);
  const auto sample = torch::randn(shape).to(config.scalarType());
  ProfileOptions profileOptions;
  profileOptions.device = stageDevice(options);
  profileOptions.allHeads = config.network.deepSupervision;
  profileOptions.keepMeasuringAllocations = options.task == "bench";
  // The loss on random targets of the profiled shape (values do not matter for time and memory).
  TrainConfig shaped = config;
  shaped.batchSize = shape[0];
  shaped.patchSize = {shape[2], shape[3], shape[4]};
  const torch::Tensor target = syntheticBatch(shaped, config.seed).target;
  const SegmentationLoss loss(config.loss, config.targets);
  profileOptions.loss = [&](const std::vector<torch::Tensor>& outputs) {
    return loss(outputs, multiScaleTargets(target, config.targets, outputs.size()));
  };
  const ModelProfile measured = profileNetwork(network, sample, profileOptions);
  return measured.scaledToVoxels(samples * p[0] * p[1] * p[2]);
}

}  // namespace

PartitionRequest partitionRequest(const TrainConfig& config, const ModelParallelOptions& options, int stages) {
  PartitionRequest request;
  request.stages = stages;
  for (double mb : options.memoryPerDeviceMb) request.budgets.push_back(static_cast<int64_t>(mb * 1024.0 * 1024.0));
  request.schedule = parseScheduleKind(options.schedule);
  request.microBatches = options.microBatches;
  request.checkpoint = options.checkpoint;
  request.optimizerSlots = optimizerSlotsFor(config.optimizer.name, config.optimizer.amsgrad);
  return request;
}

namespace {

nlohmann::json planOnRoot(const TrainConfig& config, const ModelParallelOptions& options, int stages) {
  const auto blocks = unetBlocks(config.network);
  const PartitionRequest request = partitionRequest(config, options, stages);
  PipelinePlan plan;
  plan.schedule = request.schedule;
  plan.microBatches = options.microBatches;
  plan.checkpoint = options.checkpoint;
  samplesPerMicroBatch(config, options.microBatches);
  nlohmann::json info = nlohmann::json::object();
  const bool profile = options.split.empty() || options.task == "bench";
  if (!options.split.empty()) plan.stageStarts = parseStageStarts(options.split, blocks);
  if (profile) {
    const ModelProfile measured = profileMicroBatch(config, options);
    Partition partition;
    if (options.split.empty()) {
      partition = partitionPipeline(measured, request);
      plan = partition.plan(request);
    } else {
      plan.validate(blocks.size());
      for (int s = 0; s < plan.stages(); ++s) {
        const int64_t end = s + 1 < plan.stages() ? plan.stageStarts[static_cast<size_t>(s) + 1] : static_cast<int64_t>(blocks.size());
        partition.stages.push_back(estimateStage(measured, request, s, plan.stageStarts[static_cast<size_t>(s)], end));
        partition.bottleneckSeconds = std::max(partition.bottleneckSeconds, partition.stages.back().seconds);
      }
    }
    info["profile"] = measured.toJson();
    info["partition"] = partition.toJson(measured);
    info["modelled_step_seconds"] = partition.stepSeconds(options.microBatches);
  }
  plan.validate(blocks.size());
  if (plan.stages() != stages)
    throw InputError("--split gives " + std::to_string(plan.stages()) + " stages but the job has " + std::to_string(stages) +
                     " (one per rank, or --local-stages)");
  info["plan"] = plan.toJson(blocks);
  info["memory_per_device_mb"] = options.memoryPerDeviceMb;
  return info;
}

}  // namespace

int stageCount(const ModelParallelOptions& options) {
  if (options.localStages <= 0) return mpi::sizeOf(options.comm);
  if (mpi::sizeOf(options.comm) != 1)
    throw InputError("--local-stages runs every stage in one process: start it with mpirun -np 1 (or without mpirun)");
  return options.localStages;
}

torch::Device stageDevice(const ModelParallelOptions& options, int localStage) {
  if (options.device == "cpu") return torch::kCPU;
  if (options.device != "cuda") throw InputError("--device: expected cpu or cuda, got \"" + options.device + "\"");
#if MEDSEG_HAVE_CUDA
  if (!torch::cuda::is_available())
    throw InputError("--device cuda: this LibTorch sees no CUDA device (build against a CUDA LibTorch, Torch_DIR)");
  const auto count = static_cast<int>(torch::cuda::device_count());
  // One GPU per rank (its local rank), or per stage when the stages share one process.
  const int index = localStage >= 0 ? localStage : options.localRank;
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index % count));
#else
  throw InputError("--device cuda: this build has no CUDA code paths (configure with MEDSEG_WITH_CUDA=ON)");
#endif
}

PipelinePlan makePipelinePlan(const TrainConfig& config, const ModelParallelOptions& options, nlohmann::json* planJson) {
  const int rank = mpi::rankOf(options.comm);
  std::string message;
  if (rank == 0) {
    try {
      message = nlohmann::json({{"ok", true}, {"info", planOnRoot(config, options, stageCount(options))}}).dump();
    } catch (const InputError& error) {
      message = nlohmann::json({{"ok", false}, {"message", error.what()}}).dump();
    }
  }
  // Every rank learns the plan, or the reason there is none, so all fail alike instead of hanging.
  const auto reply = nlohmann::json::parse(mpi::broadcastString(message, 0, options.comm));
  if (!reply.at("ok").get<bool>()) throw InputError(reply.at("message").get<std::string>());
  const auto& info = reply.at("info");
  if (planJson) *planJson = info;
  return PipelinePlan::fromJson(info.at("plan"));
}

std::unique_ptr<PipelineEngine> makeMpiPipeline(const TrainConfig& config, const PipelinePlan& plan, const ModelParallelOptions& options) {
  if (options.localStages > 0) {
    std::vector<torch::Device> devices;
    for (int s = 0; s < stageCount(options); ++s) devices.push_back(stageDevice(options, s));
    return makeLocalPipeline(config, plan, devices);
  }
  const torch::Device device = stageDevice(options);
  return std::make_unique<PipelineEngine>(config, plan, std::vector<int>{mpi::rankOf(options.comm)}, std::vector<torch::Device>{device},
                                          std::make_unique<MpiChannel>(options.comm, device));
}

std::vector<double> gatherToRoot(double value, MPI_Comm comm) {
  std::vector<double> all(static_cast<size_t>(mpi::sizeOf(comm)), 0.0);
  mpi::checkMpi(MPI_Gather(&value, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, 0, comm), "MPI_Gather");
  if (mpi::rankOf(comm) != 0) all.clear();
  return all;
}

}  // namespace medseg::unet3d
#endif
