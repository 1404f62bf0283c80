// `medseg pacs store --server S FILE...`: sends DICOM files (a DICOM SEG from `medseg infer
// --format seg`, or any instance) to a PACS (C-STORE; STOW-RS, one request per file, to a DICOMweb
// server). A file the PACS refuses ends the command with exit 4 and names it; files that are not
// DICOM exit 3 before anything is sent.
#include <iostream>

#include "app/cli/CommandRegistry.h"
#include "app/cli/PacsOptions.h"

namespace medseg::cli {
namespace {

void addStore(CLI::App& parent, CliContext& context) {
  auto* cmd = parent.add_subcommand("store", "Send DICOM files (e.g. a DICOM SEG) to a PACS (C-STORE or STOW-RS)");
  auto target = std::make_shared<PacsTarget>();
  auto files = std::make_shared<std::vector<std::string>>();
  addPacsTargetOptions(*cmd, *target);
  cmd->add_option("files", *files, "DICOM files to send")->required()->check(CLI::ExistingFile);
  cmd->callback([=, &context] {
    context.action = [=, &context] {
      const auto pacs = target->client();
      std::vector<std::filesystem::path> paths(files->begin(), files->end());
      const auto stored = pacs->store(paths, [&](int64_t sent, int64_t total) {
        if (context.json)
          context.reporter().emit({{"event", "progress"}, {"task", "store"}, {"done", sent}, {"total", total}});
      });
      if (context.json) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& s : stored)
          list.push_back({{"file", s.file.string()}, {"sop_class_uid", s.sopClassUid}, {"sop_instance_uid", s.sopInstanceUid}});
        context.reporter().emit({{"event", "result"}, {"kind", "pacs-store"}, {"server", pacs->describe()}, {"stored", list}});
      } else {
        for (const auto& s : stored) std::cout << s.file.string() << " -> " << pacs->describe() << " (" << s.sopInstanceUid << ")\n";
        std::cout << stored.size() << " file(s) stored" << std::endl;
      }
      return kOk;
    };
  });
}

const CommandRegistration pacsStoreCommandRegistration{"pacs", "store", &addStore};

}  // namespace
}  // namespace medseg::cli
