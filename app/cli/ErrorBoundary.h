#pragma once
// The one mapping from what a command throws to its exit code and error message: used by main() for
// every command and by `medseg train --serve` for each trial it runs.
#include <functional>

#include "app/cli/CliContext.h"

namespace medseg::cli {

// Runs `action`; an exception becomes an error event (JSON mode) or an "medseg: error: ..." line and
// the exit code of its kind: Interrupted 130, bad images, data sets and inputs 3, anything else 4.
int runWithExitCode(CliContext& context, const std::function<int()>& action);

}  // namespace medseg::cli
