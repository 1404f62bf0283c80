// `medseg pacs ...`: the DICOM network command group (echo, find, get, store); its subcommands
// register from their own files. Every one takes --server (AET@host:port for DICOM networking, an
// http(s):// DICOMweb root, or a peer name; core/pacs/PacsClient.h) and
// --pacs-config (core/pacs/PacsConfig.h: our AE title, peers, timeouts).
#include "app/cli/CommandRegistry.h"

namespace medseg::cli {
namespace {
void addPacsGroup(CLI::App& app, CliContext&) {
  CLI::App* pacs = app.add_subcommand("pacs", "Query, retrieve and store DICOM over the network (C-ECHO, C-FIND, C-GET, C-STORE; DICOMweb QIDO-RS, WADO-RS, STOW-RS)");
  pacs->require_subcommand(1);
}
const CommandRegistration pacsCommandsRegistration{"", "pacs", &addPacsGroup};
}  // namespace
}  // namespace medseg::cli
