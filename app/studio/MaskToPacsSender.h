#pragma once
// File > Send mask to PACS: the overlay as a DICOM SEG over the DICOM series the image was opened
// from (core/io/DicomSeg's writeDicomSeg, the writer of `medseg infer --format seg`), written on a
// worker thread into a temporary folder, then sent by a `medseg --json pacs store` child process.
// Possible only when a mask is shown over an image read from a DICOM folder: the SEG names that
// series' patient, study, Frame of Reference and slices, so it needs the folder's files.
#include <QJsonObject>
#include <QObject>
#include <QTemporaryDir>
#include <memory>

#include "core/io/LabelTable.h"

namespace medseg::studio {

class MedsegProcess;
class ViewerDocument;

class MaskToPacsSender : public QObject {
  Q_OBJECT
 public:
  explicit MaskToPacsSender(ViewerDocument& document, QObject* parent = nullptr);
  ~MaskToPacsSender() override;

  bool canSend() const;     // a mask over a DICOM-folder image, and nothing being sent
  QString whyNot() const;   // why canSend() is false, for the action's tool tip
  bool isBusy() const { return busy_; }
  QJsonObject lastResult() const { return result_; }  // the pacs-store result event of the last send

 public Q_SLOTS:
  void send(const QString& server);

 Q_SIGNALS:
  void availabilityChanged(bool canSend);
  void progress(const QString& status);
  void finished(bool success, const QString& message);

 private:
  void store(const QString& server, const QString& segFile);
  void finish(bool ok, const QString& message);

  ViewerDocument& document_;
  MedsegProcess* process_;
  std::shared_ptr<QTemporaryDir> workDir_;  // shared with the SEG writer's thread
  QJsonObject result_;
  QString server_;
  bool busy_ = false;
};

}  // namespace medseg::studio
