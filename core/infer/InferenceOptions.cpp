#include "core/infer/InferenceOptions.h"

#include <set>

#include "core/util/Interrupt.h"

namespace medseg {

void InferenceOptions::validate() const {
  if (threads < 0) throw InputError("threads (--threads) must be 0 (all cores) or positive");
  static const std::set<std::string> subsets{"test", "training", "all"};
  if (!subsets.count(subset)) throw InputError("subset (--subset) must be test, training or all, got \"" + subset + "\"");
  if (!parameters.is_object()) throw InputError("plugin parameters must be an object {name: value}");
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

}  // namespace medseg
