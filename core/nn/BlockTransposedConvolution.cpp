#include "core/nn/BlockTransposedConvolution.h"

#include <algorithm>
#include <optional>
#include <vector>

#include <ATen/Parallel.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/library.h>

namespace medseg {
namespace {

constexpr const char* kOperatorName = "medseg::block_conv_transpose3d";

bool takesParallelPath(const torch::Tensor& input, const torch::Tensor& weight,
                       const c10::optional<torch::Tensor>& bias) {
  const auto isCpuFloat = [](const torch::Tensor& t) { return t.is_cpu() && t.scalar_type() == torch::kFloat; };
  const bool needsGradient = torch::GradMode::is_enabled() && (input.requires_grad() || weight.requires_grad() ||
                                                               (bias && bias->defined() && bias->requires_grad()));
  return !needsGradient && input.dim() == 5 && weight.dim() == 5 && input.size(1) == weight.size(0) &&
         isCpuFloat(input) && isCpuFloat(weight) &&
         (!bias || !bias->defined() || (isCpuFloat(*bias) && bias->numel() == weight.size(1)));
}

// Output planes of one input depth slab: columns holds, for each (channel, i, j, k) of the kernel,
// the slab's H x W products; they land at depth z*kd+i, row y*kh+j, column x*kw+k of that channel.
struct BlockScatter {
  int64_t channels, kd, kh, kw, height, width;
  void operator()(const float* columns, const float* bias, float* batchOut, int64_t z, int64_t depth) const {
    const int64_t planeSize = height * kh * width * kw, rowSize = width * kw, slabSize = height * width;
    for (int64_t c = 0; c < channels; ++c) {
      const float offset = bias ? bias[c] : 0.0F;
      for (int64_t i = 0; i < kd; ++i) {
        float* plane = batchOut + (c * depth * kd + z * kd + i) * planeSize;
        for (int64_t y = 0; y < height; ++y)
          for (int64_t j = 0; j < kh; ++j) {
            float* row = plane + (y * kh + j) * rowSize;
            for (int64_t k = 0; k < kw; ++k) {
              const float* source = columns + (((c * kd + i) * kh + j) * kw + k) * slabSize + y * width;
              for (int64_t x = 0; x < width; ++x) row[x * kw + k] = source[x] + offset;
            }
          }
      }
    }
  }
};

}  // namespace

torch::Tensor blockTransposedConvolution3d(const torch::Tensor& input, const torch::Tensor& weight,
                                           const c10::optional<torch::Tensor>& bias) {
  if (input.is_cpu() && input.scalar_type() == torch::kBFloat16 && weight.scalar_type() == torch::kBFloat16) {
    // LibTorch 1.13 has no CPU bf16 transposed convolution of its own, and through oneDNN it returns
    // a wrongly shaped output (a 3^3 input with a 2^3 kernel, stride 2 gives 1^3, not 6^3).
    const auto floatBias = bias && bias->defined() ? c10::optional<torch::Tensor>(bias->to(torch::kFloat)) : c10::nullopt;
    return blockTransposedConvolution3d(input.to(torch::kFloat), weight.to(torch::kFloat), floatBias)
        .to(torch::kBFloat16);
  }
  if (!takesParallelPath(input, weight, bias))
    return torch::conv_transpose3d(input, weight, bias.value_or(torch::Tensor()), weight.sizes().slice(2));
  const auto x = input.contiguous();
  const int64_t batch = x.size(0), inChannels = x.size(1), depth = x.size(2), height = x.size(3), width = x.size(4);
  const int64_t outChannels = weight.size(1), kd = weight.size(2), kh = weight.size(3), kw = weight.size(4);
  // One row per (output channel, i, j, k): the slab's products come out in the order they are scattered.
  const auto rows = weight.reshape({inChannels, outChannels * kd * kh * kw}).t().contiguous();
  const auto offsets = bias && bias->defined() ? bias->contiguous() : torch::Tensor();
  auto out = torch::empty({batch, outChannels, depth * kd, height * kh, width * kw}, x.options());
  const BlockScatter scatter{outChannels, kd, kh, kw, height, width};
  float* outData = out.data_ptr<float>();
  const float* biasData = offsets.defined() ? offsets.data_ptr<float>() : nullptr;
  at::parallel_for(0, batch * depth, 1, [&](int64_t begin, int64_t end) {
    // Inside the parallel region the matrix products run on this thread only.
    auto columns = torch::empty({rows.size(0), height * width}, x.options());
    for (int64_t slab = begin; slab < end; ++slab) {
      const int64_t n = slab / depth, z = slab % depth;
      torch::mm_out(columns, rows, x[n].select(1, z).flatten(1));
      scatter(columns.data_ptr<float>(), biasData, outData + n * out.stride(0), z, depth);
    }
  });
  return out;
}

namespace {

using torch::jit::Node;
using torch::jit::Value;

std::optional<std::vector<int64_t>> constantInts(Value* value) {
  const auto constant = torch::jit::toIValue(value);
  if (!constant || !constant->isIntList()) return std::nullopt;
  auto list = constant->toIntVector();
  if (list.size() == 1) list.assign(3, list.front());
  if (list.size() != 3) return std::nullopt;
  return list;
}

bool constantIntsAre(Value* value, int64_t expected) {
  const auto list = constantInts(value);
  return list && std::all_of(list->begin(), list->end(), [&](int64_t v) { return v == expected; });
}

bool constantIntIs(Value* value, int64_t expected) {
  const auto constant = torch::jit::toIValue(value);
  return constant && constant->isInt() && constant->toInt() == expected;
}

// The inputs of a qualifying node in conv_transpose3d's order, or nothing.
struct TransposedConvolutionInputs {
  Value *input, *weight, *bias, *stride, *padding, *outputPadding, *groups, *dilation;
};

std::optional<TransposedConvolutionInputs> transposedConvolutionInputs(Node* node) {
  const auto in = node->inputs();
  if (node->kind() == c10::Symbol::fromQualString("aten::conv_transpose3d") && in.size() == 8)
    return TransposedConvolutionInputs{in[0], in[1], in[2], in[3], in[4], in[5], in[6], in[7]};
  if (node->kind() == c10::Symbol::fromQualString("aten::_convolution") && in.size() >= 9) {
    const auto transposed = torch::jit::toIValue(in[6]);
    if (transposed && transposed->isBool() && transposed->toBool())
      return TransposedConvolutionInputs{in[0], in[1], in[2], in[3], in[4], in[7], in[8], in[5]};
  }
  return std::nullopt;
}

bool qualifies(const TransposedConvolutionInputs& node) {
  const auto weight = torch::jit::toIValue(node.weight);
  if (!weight || !weight->isTensor() || weight->toTensor().dim() != 5) return false;
  const auto kernel = weight->toTensor().sizes().slice(2);
  const auto stride = constantInts(node.stride);
  return stride && std::equal(stride->begin(), stride->end(), kernel.begin()) && constantIntsAre(node.padding, 0) &&
         constantIntsAre(node.outputPadding, 0) && constantIntsAre(node.dilation, 1) && constantIntIs(node.groups, 1);
}

int rewriteBlock(torch::jit::Graph& graph, torch::jit::Block* block) {
  int replaced = 0;
  std::vector<Node*> nodes(block->nodes().begin(), block->nodes().end());
  for (Node* node : nodes) {
    for (torch::jit::Block* inner : node->blocks()) replaced += rewriteBlock(graph, inner);
    const auto inputs = transposedConvolutionInputs(node);
    if (!inputs || !qualifies(*inputs)) continue;
    Node* replacement =
        graph.create(c10::Symbol::fromQualString(kOperatorName), {inputs->input, inputs->weight, inputs->bias}, 1);
    replacement->insertBefore(node);
    replacement->output()->copyMetadata(node->output());
    node->output()->replaceAllUsesWith(replacement->output());
    node->destroy();
    ++replaced;
  }
  return replaced;
}

}  // namespace

int useBlockTransposedConvolution(torch::jit::Graph& graph) { return rewriteBlock(graph, graph.block()); }

}  // namespace medseg

TORCH_LIBRARY(medseg, library) {
  library.def("block_conv_transpose3d(Tensor input, Tensor weight, Tensor? bias) -> Tensor",
              &medseg::blockTransposedConvolution3d);
}
