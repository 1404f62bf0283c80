#pragma once
// Checks on MedSeg model files that need LibTorch, compiled once (ModelFileChecks.cpp, library
// medseg_test_model_checks): the many CLI, cluster and fault tests that call them compile without
// LibTorch's headers, which cost each of their sources some 20 s of a 2-core build.
#include <filesystem>

#include "plugins/unet3d/nn/ModelDescription.h"

namespace medseg::test {

// Every parameter and buffer of two model files (checkpoints or best.pt) is equal, bit for bit.
void expectIdenticalWeights(const std::filesystem::path& expected, const std::filesystem::path& actual);
// The Adam state of two training checkpoints (loaded as a resumed run loads it) is equal, bit for bit.
void expectIdenticalAdamState(const std::filesystem::path& expected, const std::filesystem::path& actual);
// Loads the file as inference does; throws what loading throws (a damaged or foreign file).
void loadForInference(const std::filesystem::path& model);
// The largest |difference| between the parameters of two model files, both read in float64; a test
// failure when their layouts differ.
double maxParameterDifference(const std::filesystem::path& a, const std::filesystem::path& b);
// An untrained network of `description` written as `medseg train` writes best.pt.
void writeUntrainedModel(const std::filesystem::path& file, const ModelDescription& description);

}  // namespace medseg::test
