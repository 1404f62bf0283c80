// `medseg dataset check DIR` and `medseg dataset info DIR`.
//   check: exit 0 when no errors (warnings allowed), 1 when the check found errors, 3 when
//          dataset.json itself is unusable (missing, not JSON, wrong field types, a path escaping the
//          folder): such a data set is refused by every command, so it is bad input, not a finding.
//   info:  what the data set declares, plus the first case's header; exit 0, or 3 as above.
// With the global --json, each prints one {"event":"result","kind":"dataset-check"|"dataset-info"}.
#include <iostream>
#include <sstream>

#include "app/cli/CommandRegistry.h"
#include "core/dataset/Dataset.h"
#include "core/dataset/DatasetChecker.h"

namespace medseg::cli {
namespace {

struct CheckCommandOptions {
  std::string dir;
  bool headerOnly = false;
  size_t maxFindings = 200;
  int threads = 0;
  bool skipTest = false;
};

struct InfoCommandOptions {
  std::string dir;
};

int runCheck(const CheckCommandOptions& options, CliContext& context) {
  const Dataset dataset = loadDataset(options.dir);
  CheckOptions check;
  check.headerOnly = options.headerOnly;
  check.maxFindings = options.maxFindings;
  check.threads = options.threads;
  check.includeTest = !options.skipTest;
  const DatasetReport report = checkDataset(dataset, check, context.reporter());
  const int code = report.ok() ? kOk : kFindings;
  if (context.json) {
    nlohmann::json result = {{"event", "result"}, {"kind", "dataset-check"}};
    result.update(report.to_json());
    result["exit_code"] = code;
    context.reporter().emit(result);
  } else {
    std::cout << report.toText() << std::flush;
  }
  return code;
}

nlohmann::json firstCaseJson(const Dataset& dataset) {
  const CaseEntry* first = !dataset.training.empty() ? &dataset.training.front()
                           : !dataset.test.empty()   ? &dataset.test.front()
                                                     : nullptr;
  if (!first) return nullptr;
  nlohmann::json item = {{"id", first->id}};
  try {
    int64_t channels = 0;
    ImageHeader header;
    for (const auto& file : first->images) {
      header = readImageHeader(file);
      channels += header.channels;
    }
    item["size"] = header.size;
    item["channels"] = channels;
    item["spacing"] = header.geometry.spacing;
    item["component_type"] = header.componentType;
    item["format"] = header.format;
    if (header.gantryTiltDegrees > 0) item["gantry_tilt_degrees"] = header.gantryTiltDegrees;
  } catch (const std::exception& e) {
    item["error"] = e.what();  // info describes; `dataset check` judges
  }
  return item;
}

std::string infoText(const Dataset& dataset, const nlohmann::json& first) {
  std::ostringstream out;
  out << "Name:        " << dataset.name << '\n';
  if (!dataset.description.empty()) out << "Description: " << dataset.description << '\n';
  out << "Folder:      " << dataset.root.string() << '\n'
      << "Layout:      " << layoutName(dataset.layout) << '\n'
      << "Modalities:  ";
  for (size_t c = 0; c < dataset.modalities.size(); ++c) out << (c ? ", " : "") << c << " " << dataset.modalities[c];
  out << "\nLabels:      ";
  bool firstLabel = true;
  for (const auto& [value, name] : dataset.labels) {
    out << (firstLabel ? "" : ", ") << value << " " << name;
    firstLabel = false;
  }
  for (const auto& [name, values] : dataset.regions) {
    out << "\nRegion:      " << name << " =";
    for (int v : values) out << ' ' << v;
  }
  auto cases = [](size_t n) { return std::to_string(n) + (n == 1 ? " case" : " cases"); };
  out << "\nTraining:    " << cases(dataset.training.size());
  if (dataset.declaredNumTraining >= 0 && dataset.declaredNumTraining != static_cast<int>(dataset.training.size()))
    out << " (dataset.json says numTraining " << dataset.declaredNumTraining << ")";
  out << "\nTest:        " << cases(dataset.test.size()) << '\n';
  if (!first.is_null()) {
    out << "First case:  " << first["id"].get<std::string>() << ": ";
    if (first.contains("error")) {
      out << "unreadable: " << first["error"].get<std::string>();
    } else {
      const auto size = first["size"].get<Size3>();
      const auto spacing = first["spacing"].get<std::array<double, 3>>();
      out << describeSize(size, first["channels"].get<int64_t>()) << " voxels, spacing " << spacing[0] << " x "
          << spacing[1] << " x " << spacing[2] << " mm, " << first["component_type"].get<std::string>() << " "
          << first["format"].get<std::string>();
      if (first.contains("gantry_tilt_degrees"))
        out << ", gantry tilt " << first["gantry_tilt_degrees"].get<double>() << " degrees (read onto a right-angled grid)";
    }
    out << '\n';
  }
  return out.str();
}

int runInfo(const InfoCommandOptions& options, CliContext& context) {
  const Dataset dataset = loadDataset(options.dir);
  const nlohmann::json first = firstCaseJson(dataset);
  if (!context.json) {
    std::cout << infoText(dataset, first) << std::flush;
    return kOk;
  }
  nlohmann::json labels = nlohmann::json::object();
  for (const auto& [value, name] : dataset.labels) labels[std::to_string(value)] = name;
  context.reporter().emit({{"event", "result"},
                           {"kind", "dataset-info"},
                           {"root", dataset.root.string()},
                           {"name", dataset.name},
                           {"description", dataset.description},
                           {"layout", dataset.layout == DatasetLayout::MSD ? "msd" : "nnunet-v2"},
                           {"modalities", dataset.modalities},
                           {"labels", labels},
                           {"regions", dataset.regions},
                           {"file_ending", dataset.fileEnding},
                           {"training_cases", dataset.training.size()},
                           {"test_cases", dataset.test.size()},
                           {"num_training_declared", dataset.declaredNumTraining},
                           {"first_case", first},
                           {"exit_code", kOk}});
  return kOk;
}

void addCheck(CLI::App& parent, CliContext& context) {
  auto* cmd = parent.add_subcommand(
      "check",
      "Check that every case of a data set can be read and trained on: files, sizes, channels, grids, "
      "NaN/Inf, label values. Exit 0 no errors, 1 errors found, 3 unusable dataset.json");
  auto opts = std::make_shared<CheckCommandOptions>();
  cmd->add_option("dir", opts->dir, "Data-set folder (with dataset.json, MSD or nnU-Net v2)")->required();
  cmd->add_flag("--header-only", opts->headerOnly, "Check file headers only (fast; no NaN or label-value checks)");
  cmd->add_option("--max-findings", opts->maxFindings, "Most findings to list, errors first (0: all)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--threads", opts->threads, "Cases checked in parallel (0: automatic)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--skip-test", opts->skipTest, "Do not check the unlabelled test cases");
  cmd->callback([opts, &context] { context.action = [opts, &context] { return runCheck(*opts, context); }; });
}

void addInfo(CLI::App& parent, CliContext& context) {
  auto* cmd = parent.add_subcommand("info", "Show what a data set declares: layout, modalities, labels, cases");
  auto opts = std::make_shared<InfoCommandOptions>();
  cmd->add_option("dir", opts->dir, "Data-set folder (with dataset.json, MSD or nnU-Net v2)")->required();
  cmd->callback([opts, &context] { context.action = [opts, &context] { return runInfo(*opts, context); }; });
}

const CommandRegistration checkRegistration{"dataset", "check", &addCheck};
const CommandRegistration infoRegistration{"dataset", "info", &addInfo};

}  // namespace
}  // namespace medseg::cli
