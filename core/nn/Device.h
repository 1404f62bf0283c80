#pragma once
// The compute device named in configs and on the command line, shared by training and inference.
#include <string>

#include <torch/torch.h>

namespace medseg {

// "auto" (or empty): CUDA when available, else CPU; "cpu"; "cuda" or "cuda:N". InputError for
// anything else or for a CUDA device that is not available.
torch::Device resolveDevice(const std::string& name);

}  // namespace medseg
