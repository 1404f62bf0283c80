#pragma once
// A file kept beside an image or label map under the same name: dir/case.nii.gz -> dir/case<suffix>
// (".label.txt", ".ctbl", ".provenance.json"). The image extensions MedSeg reads are taken off whole
// (.nii.gz, .nii, .nrrd, .nhdr, .mha, .mhd, any case); another file loses its last extension.
#include <filesystem>
#include <string>

namespace medseg {

std::string withoutImageExtension(const std::filesystem::path& image);
std::filesystem::path sidecarPath(const std::filesystem::path& image, const std::string& suffix);

}  // namespace medseg
