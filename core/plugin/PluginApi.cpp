#include "core/plugin/PluginApi.h"

#include <regex>

#include "core/plugin/PluginError.h"

// The build records what the host was compiled with (core/CMakeLists.txt); a plugin's manifest gets
// the same fields from medseg_add_plugin.
#ifndef MEDSEG_ABI_COMPILER
#error "MEDSEG_ABI_COMPILER is set by the build (core/CMakeLists.txt)"
#endif

namespace medseg::plugin {

std::string ApiVersion::text() const { return std::to_string(major) + "." + std::to_string(minor); }

ApiVersion ApiVersion::parse(const std::string& text) {
  static const std::regex pattern(R"(^(\d{1,4})\.(\d{1,4})$)");
  std::smatch match;
  if (!std::regex_match(text, match, pattern))
    throw PluginError("plugin API version \"" + text + "\" is not MAJOR.MINOR (e.g. \"" + ApiVersion{}.text() + "\")");
  return {std::stoi(match[1]), std::stoi(match[2])};
}

nlohmann::json AbiTag::toJson() const {
  return {{"compiler", compiler}, {"libtorch", libtorch}, {"qt", qt}, {"mpi", mpi}, {"os", os}, {"arch", arch}};
}

AbiTag AbiTag::fromJson(const nlohmann::json& json) {
  if (!json.is_object()) throw PluginError("\"abi\" must be an object {compiler, libtorch, qt, mpi, os, arch}");
  auto text = [&json](const char* key, bool required) -> std::string {
    if (!json.contains(key)) {
      if (required) throw PluginError(std::string("\"abi\" has no \"") + key + "\"");
      return {};
    }
    if (!json[key].is_string()) throw PluginError(std::string("\"abi\".\"") + key + "\" must be a string");
    return json[key].get<std::string>();
  };
  AbiTag tag;
  tag.compiler = text("compiler", true);
  tag.libtorch = text("libtorch", false);
  tag.qt = text("qt", false);
  tag.mpi = text("mpi", false);
  tag.os = text("os", true);
  tag.arch = text("arch", true);
  return tag;
}

AbiTag hostAbi() {
  AbiTag tag;
  tag.compiler = MEDSEG_ABI_COMPILER;
  tag.libtorch = MEDSEG_ABI_LIBTORCH;
  tag.qt = MEDSEG_ABI_QT;
  tag.mpi = MEDSEG_ABI_MPI;
  tag.os = MEDSEG_ABI_OS;
  tag.arch = MEDSEG_ABI_ARCH;
  return tag;
}

std::optional<std::string> incompatibility(const ApiVersion& api, const AbiTag& abi) {
  const ApiVersion host;
  const AbiTag mine = hostAbi();
  const std::string fix = "; rebuild the plugin against this MedSeg's SDK (plugin API " + host.text() +
                          ", find_package(MedSeg)) with " + mine.compiler + " on " + mine.os + " " + mine.arch +
                          (mine.libtorch.empty() ? "" : ", LibTorch " + mine.libtorch);
  if (api.major != host.major || api.minor > host.minor)
    return "built for plugin API " + api.text() + ", this MedSeg has plugin API " + host.text() + fix;
  if (abi.os != mine.os || abi.arch != mine.arch)
    return "built for " + abi.os + " " + abi.arch + ", this MedSeg runs on " + mine.os + " " + mine.arch + fix;
  if (abi.compiler != mine.compiler)
    return "built with " + abi.compiler + ", this MedSeg with " + mine.compiler + " (C++ runtimes differ)" + fix;
  if (!abi.libtorch.empty() && abi.libtorch != mine.libtorch)
    return "built against LibTorch " + abi.libtorch + ", this MedSeg uses LibTorch " +
           (mine.libtorch.empty() ? std::string("none") : mine.libtorch) + fix;
  if (!abi.qt.empty() && abi.qt != mine.qt)
    return "built against Qt " + abi.qt + ", this MedSeg uses Qt " + (mine.qt.empty() ? std::string("none") : mine.qt) + fix;
  if (!abi.mpi.empty() && abi.mpi != mine.mpi)
    return "built against " + abi.mpi + ", this MedSeg uses " + (mine.mpi.empty() ? std::string("no MPI") : mine.mpi) + fix +
           (mine.mpi.empty() ? "" : ", " + mine.mpi);
  return std::nullopt;
}

}  // namespace medseg::plugin
