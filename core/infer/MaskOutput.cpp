#include "core/infer/MaskOutput.h"

#include "core/io/DicomSeg.h"
#include "core/io/ImageIO.h"

namespace medseg {

void writeMask(const LabelVolume& labels, const InferenceCase& job, const LabelTable& table) {
  if (job.format == MaskFormat::DicomSeg) {
    writeDicomSeg(labels, table, job.dicomReference, job.labelsOut);
    return;
  }
  writeLabels(labels, job.labelsOut);
  writeLabelTablesBeside(table, job.labelsOut);  // ITK-SNAP and Slicer show our names
}

}  // namespace medseg
