#pragma once
// What every `medseg` subcommand shares: the output mode and the action chosen by parsing.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/plugin/PluginRegistry.h"
#include "core/util/Progress.h"

namespace medseg::cli {

// Exit codes, documented in `medseg --help` and README.
enum ExitCode : int {
  kOk = 0,
  kFindings = 1,      // the command ran, and what it checked has errors (dataset check, evaluate)
  kUsage = 2,         // bad command line
  kBadInput = 3,      // unreadable or invalid input file, data set or config
  kFailure = 4,       // the work itself failed (out of memory, I/O error while writing, ...)
  kInterrupted = 130  // stopped by Ctrl-C / SIGTERM after saving what could be saved
};

struct CliContext {
  bool json = false;
  // --plugin-path: folders searched for plugins before MEDSEG_PLUGIN_PATH and the installed folder.
  std::vector<std::string> pluginPaths;
  // Set by the chosen subcommand's callback; run by main() inside the error boundary.
  std::function<int()> action;
  Reporter& reporter() {
    if (!reporter_) reporter_ = std::make_unique<Reporter>(json ? OutputMode::JsonLines : OutputMode::Human);
    return *reporter_;
  }
  // The plugins every command reaches training and inference through, scanned on first use.
  plugin::PluginRegistry& plugins() {
    if (!plugins_) {
      std::vector<std::filesystem::path> extra(pluginPaths.begin(), pluginPaths.end());
      plugins_ = std::make_unique<plugin::PluginRegistry>(plugin::PluginRegistry::searchPath(extra));
    }
    return *plugins_;
  }

 private:
  std::unique_ptr<Reporter> reporter_;
  std::unique_ptr<plugin::PluginRegistry> plugins_;
};

}  // namespace medseg::cli
