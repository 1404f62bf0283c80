#pragma once
// Telling model files apart by their contents, before anything is built from them: MedSeg
// checkpoints and TorchScript modules are both PyTorch zip archives; a checkpoint carries the
// "medseg/format" entry (plugins/unet3d/nn/ModelCheckpoint.cpp).
#include <filesystem>

namespace medseg {

bool isZipArchive(const std::filesystem::path& file);        // starts with the zip magic "PK\3\4"
bool hasMedsegFormatTag(const std::filesystem::path& file);  // a PyTorch archive with "medseg/format"

}  // namespace medseg
