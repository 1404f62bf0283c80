#pragma once
// Command-line flags made from the plugins' parameter schemas, the one declaration of a plugin's
// parameters (as Slicer's CLI modules make theirs from the module's XML): parameter `window_batch`
// becomes `--window-batch VALUE`, a boolean that is off by default `--name`, one that is on by default
// `--no-name`. Where several plugins declare a name, one flag serves them all, and its help says whose it
// is. Values stay text until the command knows its plugin; that plugin's schema then parses and checks
// them (ParameterSchema::parseAssignment), exactly as it does `--set name=value`.
#include <map>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/plugin/ParameterSchema.h"

namespace medseg::cli {

class SchemaFlags {
 public:
  // Adds a flag for every parameter of `schemas` (owner, e.g. "unet3d" -> its schema) to `command`, in an
  // option group; parameters whose flag would collide with one of the command's own options are left to
  // `--set` (the help says so).
  void add(CLI::App& command, const std::vector<std::pair<std::string, const plugin::ParameterSchema*>>& schemas,
           const std::string& group);
  // "name=value" for every flag given on the command line, in the order of the parameters.
  std::vector<std::string> assignments() const;
  // The parameters that have a flag (for tests and help).
  std::vector<std::string> names() const;

 private:
  struct Flag {
    std::string parameter;
    bool negated = false;  // --no-name: sets false
    bool isSwitch = false;  // takes no value
    CLI::Option* option = nullptr;
    std::string text;       // the value given
    bool on = false;        // a switch given
  };
  std::vector<std::unique_ptr<Flag>> flags_;
};

// `name` as a flag: "window_batch" -> "window-batch"; "optimizer.lr" -> "optimizer-lr".
std::string flagName(const std::string& parameter);

}  // namespace medseg::cli
