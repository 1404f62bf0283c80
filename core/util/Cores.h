#pragma once
// How many cores this process may use: its CPU affinity (what taskset, cgroups, Slurm's
// --cpus-per-task or mpirun's binding give it), not the machine's total. LibTorch's own default is
// the number of physical cores, which on a 2-vCPU machine with hyper-threads is 1.
namespace medseg {

int usableCores();

}  // namespace medseg
