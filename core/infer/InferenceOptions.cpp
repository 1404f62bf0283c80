#include "core/infer/InferenceOptions.h"

#include <set>

#include "core/infer/Predictor.h"
#include "core/nn/Autocast.h"
#include "core/nn/Device.h"
#include "core/util/Interrupt.h"

namespace medseg {

void InferenceOptions::validate() const {
  if (!roi.empty()) {
    if (roi.size() != 1 && roi.size() != 3)
      throw InputError("roi (--roi) takes one edge (96) or three (z,y,x: 96,96,96)");
    for (int64_t r : roi)
      if (r < 1) throw InputError("roi (--roi) values must be positive");
  }
  if (!(overlap >= 0 && overlap < 1)) throw InputError("overlap (--overlap) must be in [0, 1)");
  if (windowBatch < 1) throw InputError("window batch (--window-batch) must be at least 1");
  if (windowWorkers < 0) throw InputError("window workers (--workers) must be 0 (automatic) or more");
  if (threads < 0) throw InputError("threads (--threads) must be 0 (all cores) or positive");
  static const std::set<std::string> subsets{"test", "training", "all"};
  if (!subsets.count(subset)) throw InputError("subset (--subset) must be test, training or all, got \"" + subset + "\"");
  if (regions && !classes.empty()) throw InputError("regions (--regions) and classes (--classes) exclude each other");
}

MaskFormat parseMaskFormat(const std::string& name) {
  if (name == "nifti") return MaskFormat::Nifti;
  if (name == "nrrd") return MaskFormat::Nrrd;
  if (name == "seg") return MaskFormat::DicomSeg;
  throw InputError("mask format (--format) must be nifti, nrrd or seg, got \"" + name + "\"");
}

const char* maskExtension(MaskFormat format) {
  switch (format) {
    case MaskFormat::Nrrd: return ".nrrd";
    case MaskFormat::DicomSeg: return ".dcm";
    default: return ".nii.gz";
  }
}

PredictorOptions InferenceOptions::predictorOptions() const {
  validate();
  PredictorOptions p;
  if (!roi.empty())
    p.roi = roi.size() == 1 ? std::array<int64_t, 3>{roi[0], roi[0], roi[0]} : std::array<int64_t, 3>{roi[0], roi[1], roi[2]};
  p.overlap = overlap;
  p.windowBatch = windowBatch;
  p.windowWorkers = windowWorkers;
  p.threads = threads;
  p.wholeVolume = wholeVolume;
  p.mirrorTta = tta;
  p.gaussian = gaussian;
  p.probabilities = probabilities;
  p.bf16 = precisionChoice().bf16;
  return p;
}

PrecisionChoice InferenceOptions::precisionChoice() const { return choosePrecision(precision, resolveDevice(device)); }

ModelOverrides InferenceOptions::modelOverrides() const {
  ModelOverrides overrides;
  overrides.classNames = classes;
  overrides.regions = regions;
  overrides.modalities = modalities;
  return overrides;
}

}  // namespace medseg
