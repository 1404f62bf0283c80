// `medseg pacs get --server S --series UID --out DIR`: retrieves one series (C-GET, or WADO-RS from
// a DICOMweb server) into DIR, which must be new or empty, with a progress bar (--json: "progress"
// events, task "retrieve"). DIR appears only once every instance has arrived; a cut-off transfer
// exits 4 and leaves no DIR.
#include <iostream>
#include <memory>

#include "app/cli/CommandRegistry.h"
#include "app/cli/PacsOptions.h"
#include "core/util/Progress.h"

namespace medseg::cli {
namespace {

void addGet(CLI::App& parent, CliContext& context) {
  auto* cmd = parent.add_subcommand("get", "Retrieve one series from a PACS into a folder (C-GET or WADO-RS)");
  auto target = std::make_shared<PacsTarget>();
  auto series = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  addPacsTargetOptions(*cmd, *target);
  cmd->add_option("--series", *series, "Series Instance UID (see `medseg pacs find`)")->required();
  cmd->add_option("--out", *out, "New or empty folder for the series' files")->required();
  cmd->callback([=, &context] {
    context.action = [=, &context] {
      const auto pacs = target->client();
      std::unique_ptr<Progress> bar;
      int64_t shown = 0;
      const RetrieveResult result = pacs->retrieveSeries(*series, *out, [&](int64_t received, int64_t expected) {
        if (!bar) bar = std::make_unique<Progress>(context.reporter(), "retrieve " + *series, expected > 0 ? expected : received);
        bar->advance(received - shown);
        shown = received;
      });
      bar.reset();
      if (context.json)
        context.reporter().emit({{"event", "result"}, {"kind", "pacs-get"}, {"server", pacs->describe()},
                                 {"series_uid", *series}, {"folder", result.folder.string()},
                                 {"instances", result.instances}, {"seconds", result.seconds}});
      else
        std::cout << result.instances << " instance(s) of series " << *series << " -> " << result.folder.string() << std::endl;
      return kOk;
    };
  });
}

const CommandRegistration pacsGetCommandRegistration{"pacs", "get", &addGet};

}  // namespace
}  // namespace medseg::cli
