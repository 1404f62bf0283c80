#pragma once
// A restricted reader of the pickle inside a PyTorch checkpoint (data.pkl of torch.save's zip archive).
//
// A pickle is a program for Python's pickle machine: it may import any global and call it (os.system,
// builtins.eval, ...), which is how a downloaded model file can run code. So this reader interprets the
// pickle itself and never runs anything: it builds plain values (None, numbers, strings, tuples, lists,
// dicts) and re-implements the few calls a checkpoint needs (OrderedDict(), torch's tensor rebuild,
// torch.device, NumPy scalars). Any other global is refused by name where the pickle asks for it,
// before anything is called. Tensors come back as references into the archive's storage records; the
// caller reads those (NnunetCheckpoint.cpp). No LibTorch here, so the fuzz target runs without it.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/util/Interrupt.h"

namespace medseg::nnunet {

// A pickle refused: damaged, truncated, beyond the reader's bounds, or asking for a global or an
// operation a PyTorch checkpoint does not need. The message names what and where, not the file.
class PickleError : public InputError {
 public:
  using InputError::InputError;
};

// The element types of torch's typed storages (torch.FloatStorage, ...), as persistent ids name them.
enum class StorageType { Float, Double, Half, BFloat16, Long, Int, Short, Char, Byte, Bool };
size_t storageElementBytes(StorageType type);
const char* storageTypeName(StorageType type);  // "torch.FloatStorage"

// One storage record of the archive, <prefix>/data/<key>, as the pickle declares it. The pickle
// declares each key with one type and length; a record that holds another length is the caller's
// error to report.
struct StorageReference {
  std::string key;
  StorageType type = StorageType::Float;
  int64_t elements = 0;
};

// A tensor as torch._utils._rebuild_tensor_v2 describes it: a strided view of a storage. Checked when
// read: sizes and strides are non-negative, of equal rank, and every element they address lies inside
// the storage, so a view made from them never reads outside the record.
struct TensorReference {
  StorageReference storage;
  int64_t storageOffset = 0;  // in elements
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;  // in elements
  bool requiresGrad = false;
};

inline constexpr int kMaxPickleNesting = 100;  // nnU-Net's deepest (plans) is about 10

namespace detail {
class PickleMachine;
}

// A value built by the pickle. Scalars and strings are values; tuples, lists and dicts are shared, as in
// Python: two references to one memo entry are one object. What readRestrictedPickle returns is a tree
// or a DAG (cycles are refused), nested at most kMaxPickleNesting deep.
class PickleValue {
 public:
  enum class Kind {
    None, Bool, Int, Float, String, Bytes, Tuple, List, Dict,
    Tensor,
    Storage,     // a persistent id resolved to a storage record (a tensor's first argument)
    Device,      // torch.device: asString() is "cpu", "cuda:0", ...
    NumpyDtype,  // numpy.dtype: asString() is its type code ("f8", "i8", "b1")
    Global,      // an allow-listed class or function, not called: asString() is "torch.FloatStorage", ...
  };
  using Entry = std::pair<PickleValue, PickleValue>;

  PickleValue() = default;  // None

  Kind kind() const { return kind_; }
  bool isNone() const { return kind_ == Kind::None; }
  // The accessors throw PickleError when the value is of another kind.
  bool asBool() const;
  int64_t asInt() const;  // Int, or Bool as Python's int subclass
  double asFloat() const;  // Float or Int
  const std::string& asString() const;  // String, Bytes (raw bytes), Device, NumpyDtype, Global
  const TensorReference& asTensor() const;
  const StorageReference& asStorage() const;
  const std::vector<PickleValue>& items() const;  // Tuple, List
  const std::vector<Entry>& entries() const;  // Dict, in insertion order (later SETITEMs replace values)
  // Dict: the value under the string key, or nullptr when there is none.
  const PickleValue* find(std::string_view key) const;
  // "a tuple", "an int", ... for messages.
  std::string kindName() const;

 private:
  // Values are made only by the pickle machine.
  friend class detail::PickleMachine;
  struct Container;
  static PickleValue boolean(bool value);
  static PickleValue integer(int64_t value);
  static PickleValue real(double value);
  static PickleValue text(Kind kind, std::string value);  // String, Bytes, Device, NumpyDtype, Global
  static PickleValue tensor(TensorReference tensor);
  static PickleValue storage(StorageReference storage);
  static PickleValue container(Kind kind, std::shared_ptr<Container> box);  // Tuple, List, Dict
  Container& box() const;  // Tuple, List or Dict, else PickleError

  Kind kind_ = Kind::None;
  std::variant<std::monostate, int64_t, double, std::shared_ptr<const std::string>,
               std::shared_ptr<const TensorReference>, std::shared_ptr<const StorageReference>,
               std::shared_ptr<Container>>
      payload_;
};

// The value a pickle (protocol 2 as torch.save writes it; the same opcodes of protocols up to 5) builds,
// or PickleError. Only these globals are read: collections.OrderedDict, torch._utils._rebuild_tensor_v2,
// torch._utils._rebuild_parameter, torch.device, torch.<Type>Storage, numpy.dtype,
// numpy.core.multiarray.scalar (numpy._core in NumPy 2) and _codecs.encode.
PickleValue readRestrictedPickle(std::string_view bytes);

}  // namespace medseg::nnunet
