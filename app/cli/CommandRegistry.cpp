#include "app/cli/CommandRegistry.h"

#include <algorithm>
#include <stdexcept>

namespace medseg::cli {
namespace {
std::vector<const CommandRegistration*>& registry() {
  static std::vector<const CommandRegistration*> commands;  // function-local: safe during static init
  return commands;
}
}  // namespace

CommandRegistration::CommandRegistration(std::string parentName, std::string commandName, RegisterFn function)
    : parent(std::move(parentName)), name(std::move(commandName)), fn(function) {
  registry().push_back(this);
}

const std::vector<const CommandRegistration*>& registeredCommands() { return registry(); }

void addRegisteredCommands(CLI::App& app, CliContext& context) {
  std::vector<const CommandRegistration*> commands = registry();
  std::sort(commands.begin(), commands.end(), [](const auto* a, const auto* b) {
    if (a->parent.empty() != b->parent.empty()) return a->parent.empty();
    return a->name < b->name;
  });
  for (const auto* command : commands) {
    CLI::App* parent = &app;
    if (!command->parent.empty()) {
      const auto groups = app.get_subcommands([&](const CLI::App* a) { return a->get_name() == command->parent; });
      if (groups.empty())
        throw std::logic_error("command '" + command->name + "' names unknown group '" + command->parent + "'");
      parent = groups.front();
    }
    command->fn(*parent, context);
  }
}

}  // namespace medseg::cli
