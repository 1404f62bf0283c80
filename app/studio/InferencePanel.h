#pragma once
// Segment the open image through an inference plugin: pick the plugin (the registry's, from their
// manifests), its model when it needs one, its parameters in a form built from its schema
// (ParameterForm), and, for a plugin that takes prompts, seed points Shift-clicked in the slice
// views. Runs `medseg infer` as a child process on the image's file (or on a temporary copy of the
// open volume when it has no readable file), follows its progress, shows the predicted mask as the
// overlay, and saves the mask. A plugin that fails or crashes ends only that child: the panel shows
// the error in a dialog and the viewer stays up.
#include <QJsonObject>
#include <QTemporaryDir>
#include <QWidget>
#include <memory>

#include <array>
#include <vector>

#include "core/plugin/PluginRegistry.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;

namespace medseg::studio {

class MedsegProcess;
class ParameterForm;
class ViewerDocument;

class InferencePanel : public QWidget {
  Q_OBJECT
 public:
  InferencePanel(ViewerDocument& document, QWidget* parent = nullptr);
  ~InferencePanel() override;
  void setModel(const QString& checkpoint);
  QString model() const;
  // Chooses the plugin by id; false when the registry has no usable inference plugin of that id.
  bool setPlugin(const QString& id);
  QString pluginId() const;
  ParameterForm* parameterForm() const { return parameters_; }
  const std::vector<std::array<int64_t, 3>>& seeds() const { return seeds_; }
  // The arguments of the `medseg infer` child for `input` (what run() starts).
  QStringList inferArguments(const QString& input) const;
  QProgressBar* progressBar() const { return progress_; }
  bool isRunning() const;
  QString statusText() const;
  QString predictionPath() const { return predictionPath_; }  // the last prediction (temporary file)
  QJsonObject lastResult() const { return lastResult_; }      // the `infer` result event of the last run

 public Q_SLOTS:
  void run();
  void stop();
  // Writes the overlay (the prediction, or what the user changed since) with the image's geometry.
  bool saveMask(const QString& path);
  // A seed point (voxel indices) for a plugin that takes prompts; ignored by the others.
  void addSeed(const std::array<int64_t, 3>& voxel);
  void clearSeeds();

 Q_SIGNALS:
  void inferenceFinished(bool success, const QString& message);

 private:
  void startProcess(const QString& input);
  void finish(bool ok, const QString& message);
  void chooseAndSaveMask();
  void pluginChanged();
  const plugin::PluginManifest* manifest() const;

  ViewerDocument& document_;
  plugin::PluginRegistry registry_;  // manifests only: no plugin code runs in the viewer
  QComboBox* plugin_;
  QLineEdit* model_;
  QWidget* modelRow_;
  ParameterForm* parameters_;
  QLabel* seedsLabel_;
  QPushButton* clearSeeds_;
  std::vector<std::array<int64_t, 3>> seeds_;
  QPushButton* runButton_;
  QPushButton* stopButton_;
  QPushButton* saveButton_;
  QProgressBar* progress_;
  QLabel* status_;
  MedsegProcess* process_;
  std::unique_ptr<QTemporaryDir> workDir_;
  QString predictionPath_;
  QJsonObject lastResult_;
  bool preparing_ = false;  // writing the open volume to a temporary file
};

}  // namespace medseg::studio
