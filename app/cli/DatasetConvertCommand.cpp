// `medseg dataset convert DIR --to msd|nnunet --out OUT`: a data set written again in MSD's or nnU-Net v2's
// layout (core/dataset/DatasetConversion.h), for tools that read only one of them: a BraTS challenge folder
// as downloaded becomes an MSD or nnU-Net data set with MSD's channel order and label values.
// Exit 0 written, 2 bad options, 3 unreadable source or unusable --out, 130 interrupted.
// With the global --json: progress events, then one {"event":"result","kind":"dataset-convert"}.
#include <iostream>

#include "app/cli/CommandRegistry.h"
#include "core/dataset/DatasetConversion.h"

namespace medseg::cli {
namespace {

struct ConvertOptions {
  std::string source, out, to;
};

int runConvert(const ConvertOptions& o, CliContext& context) {
  const Dataset source = loadDataset(o.source);
  const DatasetLayout layout = o.to == "msd" ? DatasetLayout::MSD : DatasetLayout::NnUNetV2;
  const Dataset converted = convertDataset(source, o.out, layout, context.reporter());
  if (context.json) {
    context.reporter().emit({{"event", "result"}, {"kind", "dataset-convert"}, {"source", o.source},
                             {"source_layout", layoutName(source.layout)}, {"out", o.out},
                             {"layout", layoutName(layout)}, {"training", converted.training.size()},
                             {"test", converted.test.size()}});
  } else {
    std::cout << layoutName(source.layout) << " " << o.source << " -> " << layoutName(layout) << " " << o.out << ": "
              << converted.training.size() << " training and " << converted.test.size() << " test case(s)\n";
  }
  return kOk;
}

void addConvert(CLI::App& parent, CliContext& context) {
  auto* cmd = parent.add_subcommand("convert",
                                    "Write a data set (MSD, nnU-Net v2 or a BraTS challenge folder) again as MSD or nnU-Net v2");
  auto o = std::make_shared<ConvertOptions>();
  cmd->add_option("data", o->source, "Data-set folder (dataset.json, or BraTS case folders as downloaded)")->required();
  cmd->add_option("--to", o->to, "Layout to write: msd (one 4-D image per case) or nnunet (one file per channel)")
      ->required()
      ->check(CLI::IsMember({"msd", "nnunet"}));
  cmd->add_option("--out", o->out, "New or empty folder for the converted data set")->required();
  cmd->callback([o, &context] { context.action = [o, &context] { return runConvert(*o, context); }; });
}

const CommandRegistration datasetConvertCommandRegistration{"dataset", "convert", &addConvert};

}  // namespace
}  // namespace medseg::cli
