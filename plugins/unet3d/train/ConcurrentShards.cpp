#include "plugins/unet3d/train/ConcurrentShards.h"

#include <algorithm>

#include <omp.h>

#include "core/nn/Autocast.h"
#include "plugins/unet3d/train/Targets.h"
#include "core/util/Interrupt.h"

namespace medseg {
namespace {

// The sums of every head of one shard, and the graphs behind them until its backward.
struct ShardPass {
  std::vector<LossSums> heads;
  std::vector<torch::Tensor> gradients;  // one per parameter (undefined: no contribution)
};

// A leaf standing for one of a shard's sums in the batch's loss, and the batch loss' gradient there.
struct SumLeaf {
  torch::Tensor sums;      // the shard's own sums (in its graph)
  torch::Tensor leaf;      // detached copy the batch's loss is built from
  torch::Tensor gradient;  // d(batch loss) / d(leaf); undefined: no contribution
};

}  // namespace

int64_t chooseBatchShards(int64_t requested, int64_t batchSize, int64_t cores, bool cpu, const std::string& norm, bool bf16) {
  if (!cpu) return 1;  // a GPU runs one batch's kernels across the whole device
  if (norm == "batch") {
    if (requested > 1)
      throw InputError("batch_shards " + std::to_string(requested) +
                       " needs a per-sample norm: batch norm would see each shard's statistics instead of the "
                       "batch's (set network.norm to instance or group, or batch_shards to 1)");
    return 1;
  }
  if (requested > 0) return std::min(requested, std::max<int64_t>(1, batchSize));
  // oneDNN's bf16 kernels already fill the cores on a whole batch (measured: README, Benchmarks).
  if (bf16) return 1;
  return std::max<int64_t>(1, std::min(batchSize, cores));
}

ConcurrentShards::ConcurrentShards(int64_t shards, int64_t threadsPerShard)
    : threadsPerShard_(std::max<int64_t>(1, threadsPerShard)),
      team_(std::max<int64_t>(1, shards), [threads = static_cast<int>(std::max<int64_t>(1, threadsPerShard))] {
        omp_set_num_threads(threads);  // OpenMP's thread count is per thread: oneDNN and OpenBLAS read it here
      }) {}

torch::Tensor ConcurrentShards::lossAndGradients(UNet3dImpl& network, const SegmentationLoss& loss, TargetMode targets,
                                                 const torch::Tensor& image, const torch::Tensor& target, bool bf16Autocast) {
  const int64_t samples = image.size(0);
  const int64_t count = std::min(samples, shards());
  std::vector<int64_t> first(count + 1);
  for (int64_t k = 0; k <= count; ++k) first[k] = k * samples / count;
  auto shardOf = [&](const torch::Tensor& t, int64_t k) { return t.narrow(0, first[k], first[k + 1] - first[k]); };

  // 1. Each shard's forward and the sums of its loss, at once.
  std::vector<ShardPass> passes(count);
  team_.run(count, [&](int64_t k) {
    Bf16Autocast autocast(torch::kCPU, bf16Autocast);
    const auto outputs = network.forwardAllHeads(shardOf(image, k));
    const auto shardTargets = multiScaleTargets(shardOf(target, k), targets, outputs.size());
    for (size_t h = 0; h < outputs.size(); ++h) passes[k].heads.push_back(loss.sums(outputs[h], shardTargets[h]));
  });

  // 2. The batch's loss from every shard's sums, and its gradient with respect to each shard's sums.
  const size_t heads = passes[0].heads.size();
  const auto weights = SegmentationLoss::deepSupervisionWeights(heads);
  std::vector<std::vector<SumLeaf>> leaves(count);  // per shard, every head's sums
  auto leafFor = [&](int64_t k, const torch::Tensor& sums) {
    leaves[k].push_back({sums, sums.detach().requires_grad_(true), {}});
    return leaves[k].back().leaf;
  };
  torch::Tensor total;
  for (size_t h = 0; h < heads; ++h) {
    torch::Tensor crossEntropy;
    std::vector<torch::Tensor> intersection, predicted, reference;
    for (int64_t k = 0; k < count; ++k) {
      const LossSums& s = passes[k].heads[h];
      const double share = double(first[k + 1] - first[k]) / double(samples);  // shards' voxel shares
      const auto term = share * leafFor(k, s.crossEntropy);
      crossEntropy = crossEntropy.defined() ? crossEntropy + term : term;
      if (!s.hasDice()) continue;
      intersection.push_back(leafFor(k, s.intersection));
      predicted.push_back(leafFor(k, s.predicted));
      reference.push_back(s.reference.detach());
    }
    const bool dice = !intersection.empty();
    const auto headLoss = loss.fromSums(crossEntropy, dice ? torch::cat(intersection) : torch::Tensor(),
                                        dice ? torch::cat(predicted) : torch::Tensor(), dice ? torch::cat(reference) : torch::Tensor());
    const auto term = weights[h] * headLoss;
    total = total.defined() ? total + term : term;
  }
  std::vector<torch::Tensor> allLeaves;
  for (const auto& shard : leaves)
    for (const auto& l : shard) allLeaves.push_back(l.leaf);
  const auto sumGradients = torch::autograd::grad({total}, allLeaves, {}, /*retain_graph=*/false, /*create_graph=*/false,
                                                  /*allow_unused=*/true);
  size_t next = 0;
  for (auto& shard : leaves)
    for (auto& l : shard) l.gradient = sumGradients[next++];

  // 3. Each shard's backward of its share of the batch's loss, at once.
  const auto parameters = network.parameters();
  team_.run(count, [&](int64_t k) {
    torch::Tensor share;
    for (const auto& l : leaves[k]) {
      if (!l.gradient.defined()) continue;
      const auto term = (l.gradient * l.sums).sum();
      share = share.defined() ? share + term : term;
    }
    leaves[k].clear();
    passes[k].heads.clear();  // the graph's memory goes with the thread's last reference
    if (!share.defined()) return;
    passes[k].gradients = torch::autograd::grad({share}, parameters, {}, /*retain_graph=*/false,
                                                /*create_graph=*/false, /*allow_unused=*/true);
  });

  // 4. The batch gradient, added in shard order (reproducible).
  torch::NoGradGuard noGrad;
  for (size_t i = 0; i < parameters.size(); ++i) {
    torch::Tensor sum;
    for (int64_t k = 0; k < count; ++k) {
      if (passes[k].gradients.empty()) continue;
      const auto& g = passes[k].gradients[i];
      if (g.defined()) sum = sum.defined() ? sum.add_(g) : g.clone();
    }
    if (!sum.defined()) continue;
    auto& grad = parameters[i].mutable_grad();
    grad = grad.defined() ? grad.add_(sum) : sum;
  }
  return total.detach();
}

}  // namespace medseg
