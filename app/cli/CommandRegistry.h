#pragma once
// Commands register themselves from their own source file, so adding a command touches no other file:
//   static const CommandRegistration reg{"dataset", "synth", &registerSynth};
// Groups ("dataset") are registered with an empty parent; main() builds groups first, then their children.
#include <string>
#include <vector>

#include "app/cli/CliContext.h"

namespace medseg::cli {

using RegisterFn = void (*)(CLI::App& parent, CliContext& context);

struct CommandRegistration {
  CommandRegistration(std::string parent, std::string name, RegisterFn fn);
  std::string parent;  // "" for top-level commands and groups
  std::string name;
  RegisterFn fn;
};

const std::vector<const CommandRegistration*>& registeredCommands();
// Adds every registered command to `app`, groups before their children, in name order.
void addRegisteredCommands(CLI::App& app, CliContext& context);

}  // namespace medseg::cli
