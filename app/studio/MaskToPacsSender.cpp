#include "app/studio/MaskToPacsSender.h"

#include <algorithm>

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QPointer>
#include <QThread>
#include <exception>
#include <memory>

#include "app/studio/MedsegProcess.h"
#include "app/studio/ViewerDocument.h"
#include "core/io/DicomSeg.h"

namespace medseg::studio {

MaskToPacsSender::MaskToPacsSender(ViewerDocument& document, QObject* parent)
    : QObject(parent), document_(document), process_(new MedsegProcess(this)) {
  auto announce = [this] { Q_EMIT availabilityChanged(canSend()); };
  connect(&document_, &ViewerDocument::imageChanged, this, announce);
  connect(&document_, &ViewerDocument::labelsChanged, this, announce);
  connect(process_, &MedsegProcess::event, this, [this](const QJsonObject& event) {
    if (event.value("event").toString() == "result") result_ = event;
  });
  connect(process_, &MedsegProcess::finished, this, [this](bool ok, int, const QString& message) {
    if (!ok) return finish(false, tr("sending the mask to %1 failed: %2").arg(server_, message));
    const QJsonArray stored = result_.value("stored").toArray();
    const QString uid = stored.isEmpty() ? QString() : stored.first().toObject().value("sop_instance_uid").toString();
    finish(true, tr("mask sent to %1 as DICOM SEG %2").arg(result_.value("server").toString(server_), uid));
  });
}

MaskToPacsSender::~MaskToPacsSender() {
  delete process_;  // stopped and waited for before its SEG file is removed with workDir_
  process_ = nullptr;
}

bool MaskToPacsSender::canSend() const { return whyNot().isEmpty(); }

QString MaskToPacsSender::whyNot() const {
  if (busy_) return tr("a mask is being sent");
  if (!document_.hasLabels()) return tr("no mask is shown");
  if (!QFileInfo(document_.imagePath()).isDir())
    return tr("the image was not opened from a DICOM folder (a SEG refers to the slices of its DICOM series)");
  return QString();
}

void MaskToPacsSender::send(const QString& server) {
  if (!canSend()) return finish(false, tr("cannot send the mask: %1").arg(whyNot()));
  if (server.trimmed().isEmpty()) return finish(false, tr("no PACS given"));
  busy_ = true;
  server_ = server.trimmed();
  result_ = QJsonObject();
  Q_EMIT availabilityChanged(false);
  workDir_ = std::make_shared<QTemporaryDir>();
  if (!workDir_->isValid()) return finish(false, tr("cannot create a temporary folder: %1").arg(workDir_->errorString()));
  const QString segFile = workDir_->filePath("mask-seg.dcm");
  Q_EMIT progress(tr("writing the mask as DICOM SEG…"));

  // The SEG is written from a snapshot, off the UI thread: it reads every source slice's header.
  auto labels = std::make_shared<LabelVolume>(document_.labels());
  // The viewer draws the mask voxel for voxel over the image, so the SEG lies on the image's grid
  // (that of the series' slices), whatever grid a mask file opened over it declared.
  labels->geometry = document_.image().geometry;
  auto table = std::make_shared<LabelTable>(document_.segmentTable());
  const DicomSegOptions options = document_.dicomSegOptions();
  const std::string source = document_.imagePath().toStdString();
  auto failure = std::make_shared<QString>();
  // `folder` keeps the SEG's folder until the writer is done, even if the sender goes first.
  QThread* writer = QThread::create([labels, table, source, segFile, failure, options, folder = workDir_] {
    try {
      writeDicomSeg(*labels, *table, source, segFile.toStdString(), options);
    } catch (const std::exception& e) {
      *failure = QString::fromUtf8(e.what());
    }
  });
  connect(writer, &QThread::finished, writer, &QObject::deleteLater);
  QPointer<MaskToPacsSender> self(this);
  const QString chosen = server_;
  connect(writer, &QThread::finished, this, [self, chosen, segFile, failure] {
    if (!self) return;
    if (!failure->isEmpty()) return self->finish(false, tr("cannot write the mask as DICOM SEG: %1").arg(*failure));
    self->store(chosen, segFile);
  });
  writer->start();
}

void MaskToPacsSender::store(const QString& server, const QString& segFile) {
  Q_EMIT progress(tr("sending the DICOM SEG to %1…").arg(server));
  process_->start({"pacs", "store", "--server", server, segFile});
}

void MaskToPacsSender::finish(bool ok, const QString& message) {
  const bool wasBusy = busy_;
  busy_ = false;
  workDir_.reset();
  if (wasBusy) Q_EMIT availabilityChanged(canSend());
  Q_EMIT finished(ok, message);
}

}  // namespace medseg::studio
