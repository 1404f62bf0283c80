#pragma once
// The U-Net's up-sampling (a transposed convolution whose kernel equals its stride, no padding: every
// input voxel paints its own kd x kh x kw block of the output, blocks never overlap) computed on all
// cores. LibTorch 1.13's CPU conv_transpose3d spreads the matrix product over the threads but then
// scatters the columns into the output volume (col2vol) on one thread: on a whole 240x240x155 volume
// the last up-sampling alone takes 3.2 s at 1.3 cores (resources/benchmarks/conv_transpose_cpu.py).
// Here each depth slab of the input gets its own small matrix product and writes its own output
// planes, so slabs run in parallel and no full-size column buffer is made.
//
// For inference only (no autograd formula): TorchScript graphs get it through
// useBlockTransposedConvolution, which rewrites a frozen graph's conv_transpose3d nodes whose
// constant weights and settings qualify. Saved files keep LibTorch's own operator, so what
// `medseg export` writes still loads in PyTorch.
#include <memory>

#include <torch/torch.h>

namespace torch::jit {
struct Graph;
}

namespace medseg {

// conv_transpose3d(input, weight, bias, stride = kernel size). CPU float32 inputs take the parallel
// path, CPU bf16 ones too (computed in float32: LibTorch 1.13's own is wrong there); anything else
// (CUDA, inputs that need gradients) goes to LibTorch's conv_transpose3d.
torch::Tensor blockTransposedConvolution3d(const torch::Tensor& input, const torch::Tensor& weight,
                                           const c10::optional<torch::Tensor>& bias);

// Replaces, in a frozen graph, each aten::conv_transpose3d (or a transposed aten::_convolution)
// whose weight is a constant 5-D tensor, stride equals the kernel size, padding and output padding
// are 0, dilation 1 and groups 1, with the medseg::block_conv_transpose3d operator. Returns how many
// nodes were replaced.
int useBlockTransposedConvolution(torch::jit::Graph& graph);

}  // namespace medseg
