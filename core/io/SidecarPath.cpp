#include "core/io/SidecarPath.h"

#include <algorithm>
#include <cctype>

namespace medseg {

std::string withoutImageExtension(const std::filesystem::path& image) {
  std::string name = image.filename().string();
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const std::string e : {".nii.gz", ".nii", ".nrrd", ".nhdr", ".mha", ".mhd"})
    if (lower.size() > e.size() && lower.compare(lower.size() - e.size(), e.size(), e) == 0)
      return name.substr(0, name.size() - e.size());
  return image.stem().string();
}

std::filesystem::path sidecarPath(const std::filesystem::path& image, const std::string& suffix) {
  return image.parent_path() / (withoutImageExtension(image) + suffix);
}

}  // namespace medseg
