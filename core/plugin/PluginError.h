#pragma once
// Why a plugin could not be used: its manifest is unreadable or incomplete, it was built for another
// plugin API or ABI, its library does not open or lacks the entry point, or it has no such kind or
// task. The message names the plugin (or its folder) and what to do about it.
#include <stdexcept>

namespace medseg::plugin {

class PluginError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace medseg::plugin
