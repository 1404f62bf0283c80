#include "core/nn/VolumeTensor.h"

#include <cstring>
#include <stdexcept>

namespace medseg {
namespace {

torch::Tensor asChannelsFirst(const torch::Tensor& tensor, const char* what) {
  if (tensor.dim() == 3) return tensor.unsqueeze(0);
  if (tensor.dim() == 4) return tensor;
  throw std::invalid_argument(std::string(what) + ": expected a [C, D, H, W] or [D, H, W] tensor, got " +
                              std::to_string(tensor.dim()) + " dimensions");
}

template <typename T>
void copyInto(const torch::Tensor& cpuContiguous, Volume<T>& volume) {
  std::memcpy(volume.data.data(), cpuContiguous.data_ptr<T>(), volume.data.size() * sizeof(T));
}

}  // namespace

torch::Tensor imageToTensor(const ImageVolume& image) {
  auto tensor = torch::empty({image.channels, image.size[2], image.size[1], image.size[0]}, torch::kFloat32);
  std::memcpy(tensor.data_ptr<float>(), image.data.data(), image.data.size() * sizeof(float));
  return tensor;
}

torch::Tensor labelsToTensor(const LabelVolume& labels) {
  auto tensor = torch::empty({labels.channels, labels.size[2], labels.size[1], labels.size[0]}, torch::kUInt8);
  std::memcpy(tensor.data_ptr<uint8_t>(), labels.data.data(), labels.data.size());
  return tensor;
}

ImageVolume tensorToImage(const torch::Tensor& tensor, const Geometry& geometry) {
  auto t = asChannelsFirst(tensor, "tensorToImage").to(torch::kCPU, torch::kFloat32).contiguous();
  ImageVolume image({t.size(3), t.size(2), t.size(1)}, t.size(0), geometry);
  copyInto(t, image);
  return image;
}

LabelVolume tensorToLabels(const torch::Tensor& tensor, const Geometry& geometry) {
  auto t = asChannelsFirst(tensor, "tensorToLabels");
  if (t.size(0) != 1) throw std::invalid_argument("tensorToLabels: a label map has one channel");
  t = t.to(torch::kCPU).clamp(0, 255).to(torch::kUInt8).contiguous();
  LabelVolume labels({t.size(3), t.size(2), t.size(1)}, 1, geometry);
  copyInto(t, labels);
  return labels;
}

}  // namespace medseg
