#pragma once
// Which MPI datatype carries a tensor's elements. Runs compute in float32 or, to verify parallel
// paths exactly, in float64 (TrainConfig::dtype); what goes between ranks keeps that precision.
#if MEDSEG_HAVE_MPI
#include <mpi.h>

#include <stdexcept>
#include <string>

#include <torch/torch.h>

namespace medseg::unet3d {

// The type a tensor travels in: float64 stays float64, every other type (bf16, half, float32) goes as float32.
inline torch::ScalarType wireType(torch::ScalarType type) { return type == torch::kDouble ? torch::kDouble : torch::kFloat; }

inline MPI_Datatype mpiTypeOf(torch::ScalarType type) {
  if (type == torch::kFloat) return MPI_FLOAT;
  if (type == torch::kDouble) return MPI_DOUBLE;
  throw std::invalid_argument(std::string("no MPI transfer for tensors of ") + c10::toString(type) + " (float32 or float64 only)");
}

}  // namespace medseg::unet3d
#endif
