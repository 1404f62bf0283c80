// `medseg pacs find --server S [--patient ID] [--study UID] [--modality MR]`: studies and their
// series (C-FIND, Study Root). Human mode prints one line per study and one indented line per
// series (UID, modality, instances, description); --json a "result" event (kind "pacs-find") with
// "studies": [{study_uid, patient_id, patient_name, date, description, series: [...]}].
// `medseg pacs echo --server S` checks the association (C-ECHO).
#include <iostream>

#include "app/cli/CommandRegistry.h"
#include "app/cli/PacsOptions.h"
#include "core/pacs/PacsQuery.h"

namespace medseg::cli {
namespace {

void addFind(CLI::App& parent, CliContext& context) {
  auto* cmd = parent.add_subcommand("find", "List studies and their series on a PACS (C-FIND)");
  auto target = std::make_shared<PacsTarget>();
  auto filter = std::make_shared<PacsFilter>();
  addPacsTargetOptions(*cmd, *target);
  cmd->add_option("--patient", filter->patientId, "Patient ID (DICOM wildcards * and ? allowed)");
  cmd->add_option("--study", filter->studyUid, "Study Instance UID");
  cmd->add_option("--modality", filter->modality, "Series modality, e.g. MR");
  cmd->callback([=, &context] {
    context.action = [=, &context] {
      const PacsConfig config = target->config();
      const PacsPeer peer = parsePacsPeer(target->server, config);
      const std::vector<PacsStudy> studies = findStudies(peer, config, *filter);
      if (context.json) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& s : studies) list.push_back(toJson(s));
        context.reporter().emit({{"event", "result"}, {"kind", "pacs-find"}, {"server", peer.describe()}, {"studies", list}});
      } else {
        for (const auto& s : studies) {
          std::cout << "study " << s.studyUid << "  patient " << s.patientId << " (" << s.patientName << ")  " << s.date
                    << "  " << s.description << '\n';
          for (const auto& series : s.series)
            std::cout << "  series " << series.seriesUid << "  " << series.modality << "  "
                      << (series.instances >= 0 ? std::to_string(series.instances) : std::string("?")) << " instance(s)  "
                      << series.description << '\n';
        }
        std::cout << studies.size() << " stud" << (studies.size() == 1 ? "y" : "ies") << " on " << peer.describe() << std::endl;
      }
      return kOk;
    };
  });
}

void addEcho(CLI::App& parent, CliContext& context) {
  auto* cmd = parent.add_subcommand("echo", "Check that a PACS answers and accepts our AE title (C-ECHO)");
  auto target = std::make_shared<PacsTarget>();
  addPacsTargetOptions(*cmd, *target);
  cmd->callback([=, &context] {
    context.action = [=, &context] {
      const PacsConfig config = target->config();
      const PacsPeer peer = parsePacsPeer(target->server, config);
      echoPacs(peer, config);
      if (context.json)
        context.reporter().emit({{"event", "result"}, {"kind", "pacs-echo"}, {"server", peer.describe()}});
      else
        std::cout << peer.describe() << " answers (C-ECHO as " << config.aeTitle << ")" << std::endl;
      return kOk;
    };
  });
}

const CommandRegistration findRegistration{"pacs", "find", &addFind};
const CommandRegistration echoRegistration{"pacs", "echo", &addEcho};

}  // namespace
}  // namespace medseg::cli
