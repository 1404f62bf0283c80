#pragma once
// Writes one case's label map in its planned format, atomically: NIfTI or NRRD with the ITK-SNAP and
// Slicer label tables beside it, or a DICOM SEG over the case's source series (names, colours and
// codes inside the SEG itself).
#include "core/infer/InferencePlan.h"
#include "core/io/LabelTable.h"
#include "core/io/Volume.h"

namespace medseg {

void writeMask(const LabelVolume& labels, const InferenceCase& job, const LabelTable& table);

}  // namespace medseg
