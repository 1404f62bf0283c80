// `medseg`: the command-line front of MedSeg. The studio and cluster jobs run this same program
// as a child process and read its JSON-lines output (--json).
#include <filesystem>
#include <string>
#include <vector>

#include "app/cli/CommandRegistry.h"
#include "app/cli/ErrorBoundary.h"
#include "core/util/Interrupt.h"
#include "core/nn/ProcessMemory.h"

namespace {

// The --plugin-path folders, read before the command line is parsed: commands make flags from the
// plugins' manifests (SchemaFlags), so the registry must know every plugin folder first.
std::vector<std::string> pluginPathsIn(int argc, char** argv) {
  std::vector<std::string> paths;
  const std::string flag = "--plugin-path";
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    if (argument.rfind(flag + "=", 0) == 0) paths.push_back(argument.substr(flag.size() + 1));
    if (argument != flag) continue;
    std::error_code ec;
    while (i + 1 < argc && std::filesystem::is_directory(argv[i + 1], ec)) paths.push_back(argv[++i]);
  }
  return paths;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace medseg::cli;
  medseg::keepFreedMemoryInProcess();  // core/nn/ProcessMemory.h: glibc heap + LibTorch block cache
  medseg::installInterruptHandlers();  // first thread started: every later one inherits the blocked stop signals
  CLI::App app{"MedSeg: 3-D brain-tumour segmentation (data sets, 3-D U-Net training and inference, "
               "cluster runs).\nExit codes: 0 ok, 1 findings (check/evaluate found errors), 2 usage, "
               "3 bad input, 4 failure, 130 interrupted.",
               "medseg"};
  app.set_version_flag("--version", std::string("medseg ") + MEDSEG_VERSION);
  CliContext context;
  context.pluginPaths = pluginPathsIn(argc, argv);
  app.add_flag("--json", context.json, "Machine output: one JSON object per line on stdout");
  app.add_option("--plugin-path", context.pluginPaths,
                 "Folder of plugins (or one plugin's folder), searched before MEDSEG_PLUGIN_PATH and the installed "
                 "plugins; repeatable")
      ->type_name("DIR")
      ->take_all();
  app.require_subcommand(1);
  app.fallthrough();

  addRegisteredCommands(app, context);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kOk : kUsage;
  }
  return runWithExitCode(context, context.action);
}
