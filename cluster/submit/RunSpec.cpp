#include "cluster/submit/RunSpec.h"

#include <regex>

#include "cluster/submit/ShellQuote.h"
#include "core/util/Interrupt.h"

namespace medseg::cluster {

std::string toString(RunMode mode) {
  switch (mode) {
    case RunMode::Data: return "data";
    case RunMode::Experiment: return "experiment";
    case RunMode::Infer: return "infer";
  }
  return "data";
}

RunMode parseRunMode(const std::string& text) {
  if (text == "data") return RunMode::Data;
  if (text == "experiment") return RunMode::Experiment;
  if (text == "infer") return RunMode::Infer;
  throw InputError("mode: expected \"data\", \"experiment\" or \"infer\", found \"" + text + "\"");
}

void validateRunName(const std::string& name) {
  if (name.empty()) throw InputError("run name: must not be empty");
  if (name.size() > 200) throw InputError("run name: at most 200 bytes, found " + std::to_string(name.size()));
  if (name == "." || name == "..") throw InputError("run name: \"" + name + "\" is not a folder name");
  for (unsigned char c : name) {
    if (c == '/') throw InputError("run name \"" + name + "\": must not contain '/' (it names one folder)");
    if (c < 0x20 || c == 0x7f)
      throw InputError("run name: must not contain control characters (newline, tab, ...); choose a printable name");
  }
}

void RunSpec::validate() const {
  validateRunName(name);
  if (ranks < 1) throw InputError("ranks: must be at least 1, found " + std::to_string(ranks));
  if (nodes < 1) throw InputError("nodes: must be at least 1, found " + std::to_string(nodes));
  if (nodes > ranks)
    throw InputError("nodes: " + std::to_string(nodes) + " nodes for " + std::to_string(ranks) + " ranks leaves nodes idle");
  if (tasksPerNode < 0) throw InputError("tasks per node: must not be negative");
  if (tasksPerNode > 0 && tasksPerNode * nodes < ranks)
    throw InputError("tasks per node: " + std::to_string(tasksPerNode) + " x " + std::to_string(nodes) + " nodes < " +
                     std::to_string(ranks) + " ranks");
  if (gpusPerNode < 0) throw InputError("gpus per node: must not be negative");
  if (groupSize < 1) throw InputError("group size: must be at least 1");
  // Directives cannot be quoted: only strict scheduler syntax gets into the script.
  static const std::regex timeFormat(R"(^(\d+-)?\d{1,3}(:\d{2}){0,2}$)");
  if (!std::regex_match(timeLimit, timeFormat))
    throw InputError("time limit: expected minutes or [D-]HH:MM:SS (Slurm format), found \"" + timeLimit + "\"");
  if (!partition.empty() && !isPlainToken(partition, ","))
    throw InputError("partition: only letters, digits, '.', '_', '-' and ',' are allowed, found \"" + partition + "\"");
  if (!account.empty() && !isPlainToken(account))
    throw InputError("account: only letters, digits, '.', '_' and '-' are allowed, found \"" + account + "\"");
  if (mode == RunMode::Infer) {
    if (modelPath.empty()) throw InputError("infer mode: a trained model is required (--model FILE or FOLDER)");
    if (dataPath.empty()) throw InputError("infer mode: the data set to segment is required (--data DIR)");
    if (subset != "test" && subset != "training" && subset != "all")
      throw InputError("subset: expected test, training or all, found \"" + subset + "\"");
  } else if (configPath.empty()) {
    throw InputError("config: a training config file is required (--config FILE)");
  }
  if (!device.empty() && !isPlainToken(device, ":"))
    throw InputError("device: expected auto, cpu, cuda or cuda:N, found \"" + device + "\"");
  for (const auto* text : {&configPath, &dataPath, &modelPath}) {
    if (text->find('\0') != std::string::npos) throw InputError("paths must not contain NUL bytes");
    // medseg-worker (and mpirun before it) would read such a value as an option of its own.
    if (!text->empty() && text->front() == '-')
      throw InputError("path \"" + *text + "\" starts with '-', which medseg-worker would read as an option; write it "
                       "as ./" + *text + " or as an absolute path");
  }
  for (const auto& argument : extraArgs)
    if (argument.find('\0') != std::string::npos) throw InputError("extra arguments must not contain NUL bytes");
}

nlohmann::json RunSpec::toJson() const {
  return {{"name", name},           {"mode", toString(mode)},      {"ranks", ranks},
          {"nodes", nodes},         {"tasks_per_node", tasksPerNode}, {"gpus_per_node", gpusPerNode},
          {"time_limit", timeLimit}, {"partition", partition},      {"account", account},
          {"config", configPath},   {"data", dataPath},            {"group_size", groupSize},
          {"extra_args", extraArgs}, {"device", device}, {"model", modelPath},
          {"subset", subset},       {"whole_volume", wholeVolume}};
}

RunSpec RunSpec::fromJson(const nlohmann::json& json) {
  if (!json.is_object()) throw InputError("spec.json: expected a JSON object");
  RunSpec spec;
  try {
    spec.name = json.at("name").get<std::string>();
    spec.mode = parseRunMode(json.value("mode", std::string("data")));
    spec.ranks = json.value("ranks", 1);
    spec.nodes = json.value("nodes", 1);
    spec.tasksPerNode = json.value("tasks_per_node", 0);
    spec.gpusPerNode = json.value("gpus_per_node", 0);
    spec.timeLimit = json.value("time_limit", std::string("01:00:00"));
    spec.partition = json.value("partition", std::string());
    spec.account = json.value("account", std::string());
    spec.configPath = json.value("config", std::string());
    spec.dataPath = json.value("data", std::string());
    spec.groupSize = json.value("group_size", 1);
    spec.extraArgs = json.value("extra_args", std::vector<std::string>{});
    spec.device = json.value("device", std::string());
    spec.modelPath = json.value("model", std::string());
    spec.subset = json.value("subset", std::string("test"));
    spec.wholeVolume = json.value("whole_volume", false);
  } catch (const nlohmann::json::exception& error) {
    throw InputError(std::string("spec.json: ") + error.what());
  }
  return spec;
}

}  // namespace medseg::cluster
