#pragma once
// The options every `medseg pacs` subcommand shares: the peer and the PACS config file.
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "core/pacs/PacsClient.h"
#include "core/pacs/PacsConfig.h"

namespace medseg::cli {

struct PacsTarget {
  std::string server;
  std::string configFile;
  PacsConfig config() const { return loadPacsConfig(configFile); }
  // DIMSE for AET@host:port, DICOMweb for http(s):// roots (core/pacs/PacsClient.h).
  std::unique_ptr<PacsClient> client() const { return makePacsClient(server, config()); }
};

inline void addPacsTargetOptions(CLI::App& cmd, PacsTarget& target) {
  cmd.add_option("--server", target.server,
                 "The PACS: AET@host:port (DICOM, e.g. ORTHANC@127.0.0.1:4242), a DICOMweb root http(s)://host:port/ROOT "
                 "(e.g. http://127.0.0.1:8042/dicom-web), or a peer name from the config")
      ->required();
  cmd.add_option("--pacs-config", target.configFile,
                 "PACS config (JSON: ae_title, peers, timeouts); default $MEDSEG_PACS_CONFIG or ~/.config/medseg/pacs.json");
}

// The PACS config for commands where --pacs-config is optional (medseg infer).
inline void addPacsConfigOption(CLI::App& cmd, std::string& configFile) {
  cmd.add_option("--pacs-config", configFile,
                 "PACS config for pacs:// and dicomweb:// inputs (JSON: ae_title, peers, timeouts); default $MEDSEG_PACS_CONFIG or "
                 "~/.config/medseg/pacs.json");
}

}  // namespace medseg::cli
