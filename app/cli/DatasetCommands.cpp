// `medseg dataset ...`: the data-set command group; its subcommands register from their own files.
#include "app/cli/CommandRegistry.h"

namespace medseg::cli {
namespace {
void addDatasetGroup(CLI::App& app, CliContext&) {
  CLI::App* dataset = app.add_subcommand("dataset", "Inspect, check and generate segmentation data sets");
  dataset->require_subcommand(1);
}
const CommandRegistration datasetCommandsRegistration{"", "dataset", &addDatasetGroup};
}  // namespace
}  // namespace medseg::cli
