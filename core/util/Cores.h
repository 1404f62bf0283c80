#pragma once
// How many cores this process may use: its CPU affinity (what taskset, cgroups, Slurm's
// --cpus-per-task or mpirun's binding give it), not the machine's total. LibTorch's own default is
// the number of physical cores, which on a 2-vCPU machine with hyper-threads is 1.
//
// Workers that share a node (the trial workers of an experiment search) are each pinned to their own
// block of those CPUs, so two workers never take turns on one core while another core idles, and a
// worker's trial process (started after the pin) inherits the block.
#include <string>
#include <vector>

namespace medseg {

int usableCores();
// The CPU numbers of this process's affinity, ascending.
std::vector<int> usableCpus();

// Block `index` of `cpus` split into `count` contiguous blocks as even as possible (the first
// cpus.size() % count blocks one CPU larger); empty when there are fewer CPUs than blocks (then
// nobody is pinned: oversubscribed workers are best left to the scheduler) or index is out of range.
std::vector<int> cpuBlock(const std::vector<int>& cpus, int index, int count);

// Pins the calling thread (and every thread or process it starts from now on) to `cpus`; the
// reason as an exception message when the kernel refuses.
void pinThisThread(const std::vector<int>& cpus);

// "0", "0-3", "0,2,5-7": a CPU list as taskset and Slurm write it.
std::string cpuListText(const std::vector<int>& cpus);

}  // namespace medseg
