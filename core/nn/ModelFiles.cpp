#include "core/nn/ModelFiles.h"

#include <fstream>

#include <torch/torch.h>

namespace medseg {

bool isZipArchive(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  char magic[4] = {0, 0, 0, 0};
  in.read(magic, 4);
  return in.gcount() == 4 && magic[0] == 'P' && magic[1] == 'K' && magic[2] == 3 && magic[3] == 4;
}

bool hasMedsegFormatTag(const std::filesystem::path& file) {
  if (!isZipArchive(file)) return false;
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(file.string(), torch::kCPU);
  } catch (const c10::Error&) {
    return false;
  }
  c10::IValue value;
  return archive.try_read("medseg/format", value);
}

}  // namespace medseg
