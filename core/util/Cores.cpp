#include "core/util/Cores.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace medseg {

std::vector<int> usableCpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  if (cpus.empty())
    for (int cpu = 0; cpu < std::max(1, static_cast<int>(std::thread::hardware_concurrency())); ++cpu) cpus.push_back(cpu);
  return cpus;
}

int usableCores() { return static_cast<int>(usableCpus().size()); }

std::vector<int> cpuBlock(const std::vector<int>& cpus, int index, int count) {
  const int total = static_cast<int>(cpus.size());
  if (count <= 0 || index < 0 || index >= count || total < count) return {};
  const int base = total / count, larger = total % count;
  const int begin = index * base + std::min(index, larger);
  const int size = base + (index < larger ? 1 : 0);
  return std::vector<int>(cpus.begin() + begin, cpus.begin() + begin + size);
}

void pinThisThread(const std::vector<int>& cpus) {
  if (cpus.empty()) throw std::invalid_argument("pinThisThread: no CPU given");
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) CPU_SET(cpu, &set);
  if (::sched_setaffinity(0, sizeof set, &set) != 0)
    throw std::runtime_error("cannot pin to CPUs " + cpuListText(cpus) + ": " + std::strerror(errno));
}

std::string cpuListText(const std::vector<int>& cpus) {
  std::string text;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!text.empty()) text += ",";
    text += std::to_string(cpus[i]);
    if (j > i) text += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return text;
}

}  // namespace medseg
