#pragma once
// Data-set sources: "folder" opens MSD / nnU-Net v2 folders, "synthetic" generates the BraTS-like set.
// One Qt plugin object serves both through small delegate objects (one concept each).
#include <QObject>
#include <memory>

#include "core/plugin/PluginInterfaces.h"

namespace medseg::plugins {

// Folders with a dataset.json in MSD or nnU-Net v2 layout.
class FolderDatasetSource : public QObject, public DatasetSourceInterface {
  Q_OBJECT
  Q_PLUGIN_METADATA(IID MEDSEG_DATASET_SOURCE_IID FILE "plugin.json")
  Q_INTERFACES(medseg::DatasetSourceInterface)
 public:
  std::string sourceId() const override { return "folder"; }
  bool canOpen(const std::filesystem::path& location) const override;
  Dataset open(const std::filesystem::path& location) const override;
  bool canCreate() const override { return true; }
  // Creating a folder data set means generating the synthetic BraTS-like one (options: cases, seed, size).
  Dataset create(const std::filesystem::path& location, const nlohmann::json& options, Reporter& reporter) const override;
};

}  // namespace medseg::plugins
