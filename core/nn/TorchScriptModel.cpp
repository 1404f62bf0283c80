#include "core/nn/TorchScriptModel.h"

#include "core/nn/BlockTransposedConvolution.h"
#include "core/util/Interrupt.h"

namespace medseg {
namespace {

std::string firstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string upsamplingNote(int upsamplings) {
  if (upsamplings == 0) return "";
  return "; " + std::to_string(upsamplings) + " up-sampling" + (upsamplings == 1 ? "" : "s") + " on all cores";
}

}  // namespace

OptimisedGraph optimiseForInference(const torch::jit::Module& module, GraphPreparation preparation) {
  if (preparation == GraphPreparation::AsSaved) return {nullptr, kAsSavedAskedFor};
  try {
    // freeze clones the module: the one given keeps its own attributes and graph.
    auto frozen = torch::jit::freeze(module);
    auto optimised = std::make_shared<torch::jit::Module>(torch::jit::optimize_for_inference(frozen));
    const int upsamplings = useBlockTransposedConvolution(*optimised->get_method("forward").graph());
    return {optimised, "frozen and optimised for inference" + upsamplingNote(upsamplings)};
  } catch (const c10::Error& error) {
    return {nullptr, "as saved (LibTorch could not freeze it: " + firstLine(error.msg()) + ")"};
  }
}

TorchScriptModel loadTorchScriptModel(const std::filesystem::path& file, const torch::Device& device,
                                      GraphPreparation preparation) {
  TorchScriptModel model;
  model.asSaved = std::make_shared<torch::jit::Module>();
  try {
    *model.asSaved = torch::jit::load(file.string(), device);
  } catch (const c10::Error& error) {
    throw InputError(file.string() + " is neither a MedSeg checkpoint nor a loadable TorchScript model: " +
                     error.msg().substr(0, 300));
  }
  if (!model.asSaved->find_method("forward"))
    throw InputError("TorchScript model " + file.string() + " has no forward method");
  model.asSaved->eval();
  model.optimised = optimiseForInference(*model.asSaved, preparation);
  return model;
}

}  // namespace medseg
