#pragma once
// Networks made ready for inference once, at load: the graph is frozen (weights become constants)
// and passed through LibTorch's optimize_for_inference (batch-norm folding, oneDNN blocked layouts
// for the convolutions on CPUs, kept from one layer to the next), as `torch.jit.optimize_for_inference`
// does in Python; then its up-samplings (transposed convolutions with kernel == stride) go to
// core/nn/BlockTransposedConvolution, which runs them on all cores where LibTorch's uses one. This
// serves TorchScript files (torch.jit.save from PyTorch or MONAI, `medseg export`) and MedSeg
// checkpoints alike (their network turned into TorchScript by core/nn/TorchScriptExport). The network
// as saved is kept beside it for bf16 autocast, which reaches only ordinary ATen operators (the
// optimised graph's oneDNN ones would stay float32), and for runs that must match PyTorch, or
// training-time validation, bit for bit.
#include <filesystem>
#include <memory>
#include <string>

#include <torch/script.h>

namespace medseg {

enum class GraphPreparation {
  Optimised,  // freeze + optimize_for_inference where LibTorch can (outputs within float32 rounding)
  AsSaved,    // exactly the saved graph / the checkpoint's layers
};

// The optimised module and what was done ("frozen and optimised for inference; 3 up-samplings on all
// cores"), or a null module and why not: asked for AsSaved, or LibTorch could not freeze it (a
// forward that changes its own attributes, say). `module` must be in eval mode; it is not changed.
inline constexpr const char* kAsSavedAskedFor = "as saved (asked for)";  // the preparation for AsSaved
// bf16 passes: autocast reaches only ordinary operators, so they run the network as saved.
inline constexpr const char* kAsSavedForBf16 = "as saved (bf16 autocast)";

struct OptimisedGraph {
  std::shared_ptr<torch::jit::Module> module;
  std::string preparation;
};
OptimisedGraph optimiseForInference(const torch::jit::Module& module, GraphPreparation preparation);

struct TorchScriptModel {
  std::shared_ptr<torch::jit::Module> asSaved;
  OptimisedGraph optimised;

  // The module for a forward pass in this precision.
  const std::shared_ptr<torch::jit::Module>& forPrecision(bool bf16) const {
    return bf16 || !optimised.module ? asSaved : optimised.module;
  }
};

// InputError when the file is not a loadable TorchScript module or has no forward method.
TorchScriptModel loadTorchScriptModel(const std::filesystem::path& file, const torch::Device& device,
                                      GraphPreparation preparation);

}  // namespace medseg
