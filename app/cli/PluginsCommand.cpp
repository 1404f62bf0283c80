// `medseg plugins`: what the registry found (core/plugin/PluginRegistry.h).
//   medseg plugins list         every plugin with version, kinds and state; refused ones with why
//   medseg plugins info ID      one plugin's manifest: inputs, outputs, capabilities, parameter schemas, tasks
//   medseg plugins run ID TASK  one of a plugin's own tasks (--set name=value for its parameters)
// `list` and `info` read manifests only; no plugin library is opened, so a broken plugin cannot
// stop them. --load opens each library too, so that `list` also shows the ones that fail to load.
#include <iomanip>
#include <iostream>
#include <sstream>

#include "app/cli/CommandRegistry.h"
#include "app/cli/PluginTask.h"
#include "core/plugin/PluginRegistry.h"

namespace medseg::cli {
namespace {

using namespace medseg::plugin;

std::string kindsText(const PluginManifest& m) {
  std::string out;
  for (PluginKind kind : m.kinds) out += (out.empty() ? "" : ",") + std::string(pluginKindName(kind));
  return out;
}

std::string specLine(const ParameterSpec& p) {
  std::ostringstream line;
  line << "    " << std::left << std::setw(22) << p.name << std::setw(13) << parameterTypeName(p.type);
  line << "default " << (p.defaultValue.is_null() ? std::string("(unset)") : p.defaultValue.dump());
  if (p.minimum || p.maximum)
    line << "  range [" << (p.minimum ? std::to_string(*p.minimum) : "") << ", "
         << (p.maximum ? std::to_string(*p.maximum) : "") << "]";
  if (!p.choices.empty()) {
    line << "  one of";
    for (const auto& c : p.choices) line << ' ' << c;
  }
  if (!p.unit.empty()) line << "  " << p.unit;
  if (!p.help.empty()) line << "\n      " << p.help;
  return line.str();
}

void printSchema(const char* title, const ParameterSchema& schema) {
  if (schema.empty()) return;
  std::cout << title << ":\n";
  for (const auto& spec : schema.specs()) std::cout << specLine(spec) << "\n";
}

int listPlugins(CliContext& context, bool load) {
  PluginRegistry& registry = context.plugins();
  if (load)
    for (const auto& e : registry.plugins()) {
      try {
        registry.load(e.manifest.id);
      } catch (const PluginError&) {
        // Recorded in the entry's state and reason, listed below.
      }
    }
  nlohmann::json plugins = nlohmann::json::array();
  for (const auto& e : registry.plugins()) plugins.push_back(e.toJson());
  nlohmann::json problems = nlohmann::json::array();
  for (const auto& p : registry.problems()) problems.push_back({{"file", p.file.string()}, {"reason", p.reason}});
  nlohmann::json folders = nlohmann::json::array();
  for (const auto& f : registry.folders()) folders.push_back(f.string());
  auto& reporter = context.reporter();
  if (reporter.json()) {
    reporter.emit({{"event", "result"}, {"kind", "plugins"}, {"plugins", plugins}, {"problems", problems}, {"searched", folders}});
    return kOk;
  }
  if (registry.plugins().empty()) std::cout << "no plugins found\n";
  else
    std::cout << std::left << std::setw(18) << "id" << std::setw(10) << "version" << std::setw(12) << "kinds"
              << std::setw(14) << "state" << "name\n";
  for (const auto& e : registry.plugins()) {
    std::cout << std::left << std::setw(18) << e.manifest.id << std::setw(10) << e.manifest.version << std::setw(12)
              << kindsText(e.manifest) << std::setw(14) << pluginStateName(e.state) << e.manifest.name << "\n";
    if (!e.reason.empty()) std::cout << "    " << e.reason << "\n";
  }
  for (const auto& p : registry.problems()) std::cout << "problem: " << p.file.string() << ": " << p.reason << "\n";
  std::cout << "searched:";
  for (const auto& f : registry.folders()) std::cout << ' ' << f.string();
  std::cout << "\n";
  return kOk;
}

int showPlugin(CliContext& context, const std::string& id) {
  const PluginEntry& e = context.plugins().entry(id);
  auto& reporter = context.reporter();
  if (reporter.json()) {
    nlohmann::json event = {{"event", "result"}, {"kind", "plugin"}};
    event["plugin"] = e.toJson();
    reporter.emit(event);
    return kOk;
  }
  const PluginManifest& m = e.manifest;
  std::cout << m.name << " (" << m.id << " " << m.version << ")\n" << m.description << "\n";
  std::cout << "kinds: " << kindsText(m) << "   state: " << pluginStateName(e.state) << "\n";
  if (!e.reason.empty()) std::cout << "  " << e.reason << "\n";
  std::cout << "folder: " << m.folder.string() << "   library: " << m.library << "\n";
  std::cout << "built for plugin API " << m.api.text() << ", " << m.abi.compiler << ", " << m.abi.os << " " << m.abi.arch
            << (m.abi.libtorch.empty() ? "" : ", LibTorch " + m.abi.libtorch) << (m.abi.qt.empty() ? "" : ", Qt " + m.abi.qt)
            << (m.abi.mpi.empty() ? "" : ", " + m.abi.mpi)
            << "\n";
  const auto& c = m.capabilities;
  std::cout << "capabilities: devices";
  for (const auto& d : c.devices) std::cout << ' ' << d;
  std::cout << "; model " << (c.needsModel ? "required" : "none") << (c.probabilities ? "; probabilities" : "")
            << (c.dataParallel ? "; data-parallel" : "") << (c.pipeline ? "; pipeline" : "");
  for (const auto& p : c.prompts) std::cout << "; prompts " << p;
  std::cout << "\n";
  if (!m.inputs.empty()) {
    std::cout << "inputs:";
    for (const auto& i : m.inputs) std::cout << ' ' << i.name;
    std::cout << "\n";
  }
  if (!m.outputs.empty()) {
    std::cout << "outputs:";
    for (const auto& o : m.outputs) std::cout << ' ' << o.value << '=' << o.name;
    std::cout << "\n";
  }
  printSchema("infer parameters (--set name=value)", m.inferParameters);
  printSchema("train parameters (config keys)", m.trainParameters);
  for (const auto& task : m.tasks) {
    std::cout << "task " << task.name << ": " << task.help << "\n";
    printSchema("  parameters", task.parameters);
  }
  return kOk;
}

int runTask(CliContext& context, const std::string& id, const std::string& taskName,
            const std::vector<std::string>& assignments) {
  const PluginManifest& m = context.plugins().entry(id).manifest;
  const PluginTask* task = m.task(taskName);
  const nlohmann::json given =
      task ? task->parameters.parseAssignments(assignments, "plugin " + id + "'s task " + taskName) : nlohmann::json::object();
  return showTaskResult(context, "plugin-task", runPluginTask(context, id, taskName, given));
}

void registerPlugins(CLI::App& parent, CliContext& context) {
  auto* group = parent.add_subcommand("plugins", "The training and inference plugins found, and their own tasks");
  group->require_subcommand(1);

  auto* list = group->add_subcommand("list", "Every plugin found, with version, kinds and whether it can be used");
  auto load = std::make_shared<bool>(false);
  list->add_flag("--load", *load, "Also open each plugin's library, so that one that fails to load shows why");
  list->callback([&context, load] { context.action = [&context, load] { return listPlugins(context, *load); }; });

  auto* info = group->add_subcommand("info", "One plugin's manifest: inputs, outputs, capabilities, parameters, tasks");
  auto id = std::make_shared<std::string>();
  info->add_option("id", *id, "Plugin id (see `medseg plugins list`)")->required();
  info->callback([&context, id] { context.action = [&context, id] { return showPlugin(context, *id); }; });

  auto* run = group->add_subcommand("run", "Run one of a plugin's tasks (listed by `medseg plugins info ID`)");
  struct RunArguments {
    std::string id, task;
    std::vector<std::string> assignments;
  };
  auto args = std::make_shared<RunArguments>();
  run->add_option("id", args->id, "Plugin id")->required();
  run->add_option("task", args->task, "Task name")->required();
  run->add_option("--set", args->assignments, "A task parameter: name=value (repeatable)")->type_name("NAME=VALUE");
  run->callback([&context, args] {
    context.action = [&context, args] { return runTask(context, args->id, args->task, args->assignments); };
  });
}

const CommandRegistration reg{"", "plugins", &registerPlugins};

}  // namespace
}  // namespace medseg::cli
