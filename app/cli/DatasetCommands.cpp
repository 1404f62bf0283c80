// `medseg dataset ...`: the data-set command group. Each subcommand lives in its own file.
#include "app/cli/CliContext.h"

namespace medseg::cli {

void registerDatasetCommands(CLI::App& app, CliContext& context) {
  CLI::App* dataset = app.add_subcommand("dataset", "Inspect, check and generate segmentation data sets");
  dataset->require_subcommand(1);
  registerDatasetSynthCommand(*dataset, context);
  registerDatasetCheckCommand(*dataset, context);
}

}  // namespace medseg::cli
