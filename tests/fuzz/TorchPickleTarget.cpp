// A checkpoint's pickle (data.pkl) as the nnU-Net plugin reads it: the restricted unpickler, then
// what readNnunetCheckpoint takes from its result. Besides refusing cleanly, the reader must never
// accept a tensor that addresses elements outside its storage: checked again here, on every tensor.
#include <set>

#include "plugins/nnunet/NnunetCheckpoint.h"
#include "plugins/nnunet/TorchPickle.h"
#include "fuzz/FuzzTargets.h"

namespace medseg::fuzz {
namespace {

using nnunet::PickleValue;

bool insideStorage(const nnunet::TensorReference& tensor) {
  if (tensor.sizes.size() != tensor.strides.size() || tensor.storageOffset < 0) return false;
  bool empty = false;
  __int128 last = tensor.storageOffset;
  for (size_t d = 0; d < tensor.sizes.size(); ++d) {
    if (tensor.sizes[d] < 0 || tensor.strides[d] < 0) return false;
    if (tensor.sizes[d] == 0) empty = true;
    last += static_cast<__int128>(tensor.sizes[d] > 0 ? tensor.sizes[d] - 1 : 0) * tensor.strides[d];
    if (last > tensor.storage.elements) return false;  // stops before the sum can overflow
  }
  return empty ? tensor.storageOffset <= tensor.storage.elements : last < tensor.storage.elements;
}

// Every tensor of the result, each shared container walked once (a DAG can share a lot).
void checkTensors(const PickleValue& value, std::set<const void*>& seen) {
  switch (value.kind()) {
    case PickleValue::Kind::Tensor:
      if (!insideStorage(value.asTensor())) throw InvariantViolation("an accepted tensor reaches outside its storage");
      return;
    case PickleValue::Kind::Tuple:
    case PickleValue::Kind::List:
      if (!seen.insert(&value.items()).second) return;
      for (const auto& item : value.items()) checkTensors(item, seen);
      return;
    case PickleValue::Kind::Dict:
      if (!seen.insert(&value.entries()).second) return;
      for (const auto& [key, item] : value.entries()) {
        checkTensors(key, seen);
        checkTensors(item, seen);
      }
      return;
    default:
      return;
  }
}

}  // namespace

void torchPickle(const uint8_t* data, size_t size) {
  acceptedOrRefused([&] {
    const PickleValue root = nnunet::readRestrictedPickle(std::string_view(reinterpret_cast<const char*>(data), size));
    std::set<const void*> seen;
    checkTensors(root, seen);
    (void)nnunet::interpretNnunetPickle(root);
  });
}

}  // namespace medseg::fuzz
