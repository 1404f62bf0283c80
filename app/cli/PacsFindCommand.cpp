// `medseg pacs find --server S [--patient ID] [--study UID] [--modality MR]`: studies and their
// series (C-FIND, Study Root; QIDO-RS for a DICOMweb server). Human mode prints one line per study and one indented line per
// series (UID, modality, instances, description); --json a "result" event (kind "pacs-find") with
// "studies": [{study_uid, patient_id, patient_name, date, description, series: [...]}].
// `medseg pacs echo --server S` checks the association (C-ECHO; a QIDO-RS query over DICOMweb).
#include <iostream>

#include "app/cli/CommandRegistry.h"
#include "app/cli/PacsOptions.h"

namespace medseg::cli {
namespace {

void addFind(CLI::App& parent, CliContext& context) {
  auto* cmd = parent.add_subcommand("find", "List studies and their series on a PACS (C-FIND or QIDO-RS)");
  auto target = std::make_shared<PacsTarget>();
  auto filter = std::make_shared<PacsFilter>();
  addPacsTargetOptions(*cmd, *target);
  cmd->add_option("--patient", filter->patientId, "Patient ID (DICOM wildcards * and ? allowed)");
  cmd->add_option("--study", filter->studyUid, "Study Instance UID");
  cmd->add_option("--modality", filter->modality, "Series modality, e.g. MR");
  cmd->callback([=, &context] {
    context.action = [=, &context] {
      const auto pacs = target->client();
      const std::vector<PacsStudy> studies = pacs->findStudies(*filter);
      if (context.json) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& s : studies) list.push_back(toJson(s));
        context.reporter().emit({{"event", "result"}, {"kind", "pacs-find"}, {"server", pacs->describe()}, {"studies", list}});
      } else {
        for (const auto& s : studies) {
          std::cout << "study " << s.studyUid << "  patient " << s.patientId << " (" << s.patientName << ")  " << s.date
                    << "  " << s.description << '\n';
          for (const auto& series : s.series)
            std::cout << "  series " << series.seriesUid << "  " << series.modality << "  "
                      << (series.instances >= 0 ? std::to_string(series.instances) : std::string("?")) << " instance(s)  "
                      << series.description << '\n';
        }
        std::cout << studies.size() << " stud" << (studies.size() == 1 ? "y" : "ies") << " on " << pacs->describe() << std::endl;
      }
      return kOk;
    };
  });
}

void addEcho(CLI::App& parent, CliContext& context) {
  auto* cmd = parent.add_subcommand("echo", "Check that a PACS answers and accepts our AE title (C-ECHO; QIDO-RS over DICOMweb)");
  auto target = std::make_shared<PacsTarget>();
  addPacsTargetOptions(*cmd, *target);
  cmd->callback([=, &context] {
    context.action = [=, &context] {
      const auto pacs = target->client();
      const std::string how = pacs->echo();
      if (context.json)
        context.reporter().emit({{"event", "result"}, {"kind", "pacs-echo"}, {"server", pacs->describe()}, {"checked", how}});
      else
        std::cout << pacs->describe() << " answers (" << how << ")" << std::endl;
      return kOk;
    };
  });
}

const CommandRegistration findRegistration{"pacs", "find", &addFind};
const CommandRegistration echoRegistration{"pacs", "echo", &addEcho};

}  // namespace
}  // namespace medseg::cli
