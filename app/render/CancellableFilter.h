#pragma once
// Running one VTK filter so that a Cancellation stops it midway: long filters (smoothing,
// decimation) report progress many times per run, and at each report the flag is checked and the
// filter told to abort (vtkAlgorithm::SetAbortExecute). The caller then gets BuildCancelled.
#include "app/render/Cancellation.h"

class vtkAlgorithm;

namespace medseg::render {

// Updates `filter` (and whatever feeds it); throws BuildCancelled when `cancel` was raised before,
// during or right after the run.
void updateCancellable(vtkAlgorithm* filter, const Cancellation& cancel);

}  // namespace medseg::render
