#pragma once
// How many CUDA devices this process's LibTorch sees (0 in a CPU-only build). For the launchers that
// place ranks on GPUs (cluster/WorkerMain, medseg submit), which need nothing else of LibTorch: a
// declaration here keeps its headers out of their compile (defined with the devices, Device.cpp).

namespace medseg {

int cudaDeviceCount();

}  // namespace medseg
