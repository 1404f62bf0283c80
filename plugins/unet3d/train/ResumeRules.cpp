#include "plugins/unet3d/train/ResumeRules.h"

#include <sstream>

#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"

namespace medseg {

const std::set<std::string>& resumableConfigKeys() {
  static const std::set<std::string> keys{"data", "max_minutes", "threads", "device", "loader"};
  return keys;
}

void requireSameComputation(nlohmann::json saved, nlohmann::json current, const std::filesystem::path& checkpoint) {
  for (const auto& runtimeOnly : resumableConfigKeys()) {
    saved.erase(runtimeOnly);
    current.erase(runtimeOnly);
  }
  if (saved == current) return;
  std::string differing;
  for (const auto& [key, value] : current.items())
    if (!saved.contains(key) || saved[key] != value) differing += (differing.empty() ? "" : ", ") + key;
  throw InputError(checkpoint.string() + " was written by a run with another config (" +
                   (differing.empty() ? std::string("keys differ") : differing) +
                   "); start it with --fresh or use another run folder");
}

void dropMetricsAfterStep(const std::filesystem::path& metricsPath, int64_t step) {
  if (!std::filesystem::exists(metricsPath)) return;
  std::istringstream lines(readTextFile(metricsPath));
  std::string kept, line;
  bool dropped = false;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    const auto record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (record.is_object() && record.value("step", int64_t{0}) > step) {
      dropped = true;
      continue;
    }
    kept += line + "\n";
  }
  if (dropped) writeFileAtomically(metricsPath, kept);
}

}  // namespace medseg
