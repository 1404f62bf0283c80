#pragma once
// The plugin API's version and the binary interface a plugin was built for. Both are written into a
// plugin's manifest when it is built (medseg_add_plugin, cmake/MedSegPlugin.cmake) and compared with
// the host's before the library is opened: C++ plugins share the host's heap, exceptions and
// standard library, so a plugin built with another compiler, LibTorch, Qt major, MPI or for another
// OS / architecture is refused rather than loaded and left to crash (Qt Creator's PluginSpec does the
// same with its compatVersion; LibTorch, Qt and MPI matter only to plugins that use them: an MPI
// communicator crosses the plugin interface as an opaque handle, valid only in the same MPI).
//
// API versions: a host of SDK major.minor loads plugins of the same major and a minor up to its
// own (a minor adds virtual functions at the end or new optional manifest fields, never changes
// one); another major is refused.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace medseg::plugin {

constexpr int kApiMajor = 1;
constexpr int kApiMinor = 0;

struct ApiVersion {
  int major = kApiMajor;
  int minor = kApiMinor;
  std::string text() const;                          // "1.0"
  static ApiVersion parse(const std::string& text);  // "1.0"; PluginError for anything else
};

// What a binary was built with. Empty libtorch / qt / mpi: the binary does not use it.
struct AbiTag {
  std::string compiler;  // "GNU 12" (id and major version: the C++ runtime's ABI)
  std::string libtorch;  // "1.13.1"
  std::string qt;        // "6"
  std::string mpi;       // "Open MPI 4.1" (implementation and major.minor)
  std::string os;        // "Linux"
  std::string arch;      // "x86_64"
  nlohmann::json toJson() const;
  static AbiTag fromJson(const nlohmann::json& json);  // PluginError for missing fields
};

// The host's: this build of MedSeg (compiler, its LibTorch, Qt and MPI, OS and architecture).
AbiTag hostAbi();

// Why a plugin of `api` and `abi` cannot be loaded into this host, naming both sides and the fix
// ("rebuild against SDK 1.0 ..."); nothing when it can.
std::optional<std::string> incompatibility(const ApiVersion& api, const AbiTag& abi);

}  // namespace medseg::plugin
