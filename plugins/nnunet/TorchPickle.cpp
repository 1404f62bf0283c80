// The restricted pickle machine (see TorchPickle.h for why it exists). The opcodes and their encodings
// are those of Python's pickle format; this file implements the subset torch.save emits for a
// checkpoint and refuses every other opcode. Untrusted input: every length is checked against the bytes
// left before anything is allocated, the stack, marks and nesting are bounded, the memory the values
// take is charged against a fixed budget, and a tensor is accepted only where its sizes and strides
// stay inside its storage.
#include "plugins/nnunet/TorchPickle.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <unordered_map>

namespace medseg::nnunet {

struct PickleValue::Container {
  std::vector<PickleValue> items;                 // Tuple, List
  std::vector<Entry> entries;                     // Dict
  std::unordered_multimap<size_t, size_t> index;  // Dict: key hash -> position in entries
  // The final check's walk (PickleMachine::measure): Done containers belong to the result.
  enum class Visit : uint8_t { No, Open, Done } visit = Visit::No;
  int height = 0;
};

namespace {

using Kind = PickleValue::Kind;

struct StorageTypeInfo {
  StorageType type;
  const char* name;
  size_t bytes;
};

constexpr StorageTypeInfo kStorageTypes[] = {
    {StorageType::Float, "torch.FloatStorage", 4},   {StorageType::Double, "torch.DoubleStorage", 8},
    {StorageType::Half, "torch.HalfStorage", 2},     {StorageType::BFloat16, "torch.BFloat16Storage", 2},
    {StorageType::Long, "torch.LongStorage", 8},     {StorageType::Int, "torch.IntStorage", 4},
    {StorageType::Short, "torch.ShortStorage", 2},   {StorageType::Char, "torch.CharStorage", 1},
    {StorageType::Byte, "torch.ByteStorage", 1},     {StorageType::Bool, "torch.BoolStorage", 1},
};

const StorageTypeInfo& storageInfo(StorageType type) {
  for (const auto& info : kStorageTypes)
    if (info.type == type) return info;
  return kStorageTypes[0];  // unreachable: the table lists every enumerator
}

// What REDUCE may call, each re-implemented below; StorageClass is only ever named in persistent ids.
enum class Callable { OrderedDict, RebuildTensor, RebuildParameter, Device, NumpyDtype, NumpyScalar, Encode, StorageClass };

struct AllowedGlobal {
  const char* name;
  Callable callable;
};

constexpr AllowedGlobal kAllowedCallables[] = {
    {"collections.OrderedDict", Callable::OrderedDict},
    {"torch._utils._rebuild_tensor_v2", Callable::RebuildTensor},
    {"torch._utils._rebuild_parameter", Callable::RebuildParameter},
    {"torch.device", Callable::Device},
    {"numpy.dtype", Callable::NumpyDtype},
    {"numpy.core.multiarray.scalar", Callable::NumpyScalar},
    {"numpy._core.multiarray.scalar", Callable::NumpyScalar},  // NumPy 2's name
    {"_codecs.encode", Callable::Encode},
};

std::optional<Callable> allowedGlobal(std::string_view name) {
  for (const auto& allowed : kAllowedCallables)
    if (name == allowed.name) return allowed.callable;
  for (const auto& info : kStorageTypes)
    if (name == info.name) return Callable::StorageClass;
  return std::nullopt;
}

std::optional<StorageType> storageClass(std::string_view name) {
  for (const auto& info : kStorageTypes)
    if (name == info.name) return info.type;
  return std::nullopt;
}

std::string allowedGlobalNames() {
  std::string names;
  for (const auto& allowed : kAllowedCallables) names += std::string(allowed.name) + ", ";
  return names + "torch.<Type>Storage";
}

uint64_t fromLittleEndian(std::string_view raw) {
  uint64_t value = 0;
  for (size_t i = raw.size(); i-- > 0;) value = (value << 8) | static_cast<uint8_t>(raw[i]);
  return value;
}

// Names from the input go into messages: printable ASCII only, and not too long.
std::string printable(std::string_view text) {
  std::string out;
  for (const char c : text.substr(0, 120)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return text.size() > 120 ? out + "..." : out;
}

// Python's encode(s, 'latin1') of a str the pickle stored as UTF-8: one byte per code point <= 0xFF.
std::optional<std::string> latin1FromUtf8(std::string_view utf8) {
  std::string out;
  out.reserve(utf8.size());
  for (size_t i = 0; i < utf8.size(); ++i) {
    const auto c = static_cast<unsigned char>(utf8[i]);
    if (c < 0x80) {
      out += static_cast<char>(c);
      continue;
    }
    if ((c & 0xE0) != 0xC0 || i + 1 >= utf8.size()) return std::nullopt;
    const auto next = static_cast<unsigned char>(utf8[++i]);
    const unsigned codePoint = ((c & 0x1Fu) << 6) | (next & 0x3Fu);
    if ((next & 0xC0) != 0x80 || codePoint < 0x80 || codePoint > 0xFF) return std::nullopt;
    out += static_cast<char>(codePoint);
  }
  return out;
}

// Dict keys: checkpoints key their dicts by names and numbers. Python's rules (True == 1 == 1.0 are one
// key) for those, flat tuples of them, and bounds that keep hashing cheap; anything else is refused.
constexpr size_t kMaxKeyBytes = 1024;
constexpr size_t kMaxKeyItems = 16;

std::optional<int64_t> integralValue(const PickleValue& value) {
  if (value.kind() == Kind::Bool || value.kind() == Kind::Int) return value.asInt();
  if (value.kind() != Kind::Float) return std::nullopt;
  const double real = value.asFloat();
  // The bounds are exact powers of two, so the cast below is defined.
  if (!(real >= -9223372036854775808.0 && real < 9223372036854775808.0) || std::trunc(real) != real)
    return std::nullopt;
  return static_cast<int64_t>(real);
}

size_t textHash(Kind kind, std::string_view text) {
  const size_t hash = std::hash<std::string_view>{}(text);
  return kind == Kind::Bytes ? ~hash : hash;
}

size_t scalarKeyHash(const PickleValue& key) {
  switch (key.kind()) {
    case Kind::None:
      return 0x9e3779b9u;
    case Kind::Bool:
    case Kind::Int:
    case Kind::Float: {
      const auto integral = integralValue(key);
      return integral ? std::hash<int64_t>{}(*integral) : std::hash<double>{}(key.asFloat());
    }
    case Kind::String:
    case Kind::Bytes:
      if (key.asString().size() > kMaxKeyBytes)
        throw PickleError("a dict key longer than " + std::to_string(kMaxKeyBytes) + " bytes");
      return textHash(key.kind(), key.asString());
    default:
      throw PickleError("a dict key that is " + key.kindName() + ", which checkpoints do not use");
  }
}

size_t keyHash(const PickleValue& key) {
  if (key.kind() != Kind::Tuple) return scalarKeyHash(key);
  if (key.items().size() > kMaxKeyItems)
    throw PickleError("a dict key that is a tuple of more than " + std::to_string(kMaxKeyItems) + " items");
  size_t hash = 0x345678;
  for (const auto& item : key.items()) {
    if (item.kind() == Kind::Tuple) throw PickleError("a dict key that is a nested tuple");
    hash = hash * 1000003u ^ scalarKeyHash(item);
  }
  return hash;
}

bool sameScalarKey(const PickleValue& a, const PickleValue& b) {
  const auto integralA = integralValue(a);
  const auto integralB = integralValue(b);
  if (integralA || integralB) return integralA && integralB && *integralA == *integralB;
  if (a.kind() != b.kind()) return false;
  if (a.kind() == Kind::Float) return a.asFloat() == b.asFloat();  // NaN is never the same key
  if (a.kind() == Kind::String || a.kind() == Kind::Bytes) return a.asString() == b.asString();
  return a.kind() == Kind::None;
}

bool sameKey(const PickleValue& a, const PickleValue& b) {
  if (a.kind() != Kind::Tuple || b.kind() != Kind::Tuple)
    return a.kind() != Kind::Tuple && b.kind() != Kind::Tuple && sameScalarKey(a, b);
  if (a.items().size() != b.items().size()) return false;
  for (size_t i = 0; i < a.items().size(); ++i)
    if (!sameScalarKey(a.items()[i], b.items()[i])) return false;
  return true;
}

}  // namespace

size_t storageElementBytes(StorageType type) { return storageInfo(type).bytes; }

const char* storageTypeName(StorageType type) { return storageInfo(type).name; }

// ---- PickleValue ----

PickleValue PickleValue::boolean(bool value) {
  PickleValue result;
  result.kind_ = Kind::Bool;
  result.payload_ = int64_t{value};
  return result;
}

PickleValue PickleValue::integer(int64_t value) {
  PickleValue result;
  result.kind_ = Kind::Int;
  result.payload_ = value;
  return result;
}

PickleValue PickleValue::real(double value) {
  PickleValue result;
  result.kind_ = Kind::Float;
  result.payload_ = value;
  return result;
}

PickleValue PickleValue::text(Kind kind, std::string value) {
  PickleValue result;
  result.kind_ = kind;
  result.payload_ = std::make_shared<const std::string>(std::move(value));
  return result;
}

PickleValue PickleValue::tensor(TensorReference tensor) {
  PickleValue result;
  result.kind_ = Kind::Tensor;
  result.payload_ = std::make_shared<const TensorReference>(std::move(tensor));
  return result;
}

PickleValue PickleValue::storage(StorageReference storage) {
  PickleValue result;
  result.kind_ = Kind::Storage;
  result.payload_ = std::make_shared<const StorageReference>(std::move(storage));
  return result;
}

PickleValue PickleValue::container(Kind kind, std::shared_ptr<Container> box) {
  PickleValue result;
  result.kind_ = kind;
  result.payload_ = std::move(box);
  return result;
}

namespace {
[[noreturn]] void wrongKind(const PickleValue& value, const char* wanted) {
  throw PickleError(std::string("expected ") + wanted + ", found " + value.kindName());
}
}  // namespace

bool PickleValue::asBool() const {
  if (kind_ != Kind::Bool) wrongKind(*this, "a bool");
  return std::get<int64_t>(payload_) != 0;
}

int64_t PickleValue::asInt() const {
  if (kind_ != Kind::Int && kind_ != Kind::Bool) wrongKind(*this, "an int");
  return std::get<int64_t>(payload_);
}

double PickleValue::asFloat() const {
  if (kind_ == Kind::Int) return static_cast<double>(std::get<int64_t>(payload_));
  if (kind_ != Kind::Float) wrongKind(*this, "a float");
  return std::get<double>(payload_);
}

const std::string& PickleValue::asString() const {
  const auto* text = std::get_if<std::shared_ptr<const std::string>>(&payload_);
  if (!text) wrongKind(*this, "a string");
  return **text;
}

const TensorReference& PickleValue::asTensor() const {
  if (kind_ != Kind::Tensor) wrongKind(*this, "a tensor");
  return *std::get<std::shared_ptr<const TensorReference>>(payload_);
}

const StorageReference& PickleValue::asStorage() const {
  if (kind_ != Kind::Storage) wrongKind(*this, "a storage");
  return *std::get<std::shared_ptr<const StorageReference>>(payload_);
}

PickleValue::Container& PickleValue::box() const {
  const auto* box = std::get_if<std::shared_ptr<Container>>(&payload_);
  if (!box) wrongKind(*this, "a tuple, list or dict");
  return **box;
}

const std::vector<PickleValue>& PickleValue::items() const {
  if (kind_ != Kind::Tuple && kind_ != Kind::List) wrongKind(*this, "a tuple or list");
  return box().items;
}

const std::vector<PickleValue::Entry>& PickleValue::entries() const {
  if (kind_ != Kind::Dict) wrongKind(*this, "a dict");
  return box().entries;
}

const PickleValue* PickleValue::find(std::string_view key) const {
  if (kind_ != Kind::Dict) wrongKind(*this, "a dict");
  const Container& dict = box();
  const auto [begin, end] = dict.index.equal_range(textHash(Kind::String, key));
  for (auto it = begin; it != end; ++it) {
    const Entry& entry = dict.entries[it->second];
    if (entry.first.kind() == Kind::String && entry.first.asString() == key) return &entry.second;
  }
  return nullptr;
}

std::string PickleValue::kindName() const {
  switch (kind_) {
    case Kind::None: return "None";
    case Kind::Bool: return "a bool";
    case Kind::Int: return "an int";
    case Kind::Float: return "a float";
    case Kind::String: return "a string";
    case Kind::Bytes: return "bytes";
    case Kind::Tuple: return "a tuple";
    case Kind::List: return "a list";
    case Kind::Dict: return "a dict";
    case Kind::Tensor: return "a tensor";
    case Kind::Storage: return "a storage";
    case Kind::Device: return "a device";
    case Kind::NumpyDtype: return "a NumPy dtype";
    case Kind::Global: return "the class or function " + asString();
  }
  return "a value";
}

// ---- The machine ----

namespace detail {

class PickleMachine {
 public:
  explicit PickleMachine(std::string_view input) : input_(input) {}
  ~PickleMachine();
  PickleMachine(const PickleMachine&) = delete;
  PickleMachine& operator=(const PickleMachine&) = delete;

  PickleValue run();

 private:
  // Python's pickler batches SETITEMS and APPENDS by 1000, and a mark is open per container being
  // built, so legitimate pickles stay far below these.
  static constexpr size_t kMaxStack = size_t{1} << 20;
  static constexpr size_t kMaxMarks = 4096;
  static constexpr size_t kMaxLine = 256;
  static constexpr size_t kMaxRank = 32;
  // Bytes of values (as charged below) the pickle may build. nnU-Net's pickles take about 22 times
  // their size and stay under a few MB; the bound is for forged ones.
  static constexpr size_t kValueBudget = size_t{512} << 20;
  static constexpr size_t kContainerCost = 256;

  [[noreturn]] void fail(const std::string& what) const;
  void charge(size_t bytes);

  // Reading the input.
  uint8_t nextByte();
  uint64_t littleEndian(size_t bytes);
  std::string_view take(uint64_t count);
  std::string_view line();

  // Stack, marks and memo.
  size_t frameStart() const { return marks_.empty() ? 0 : marks_.back(); }
  void push(PickleValue value);
  PickleValue pop();
  const PickleValue& top() const;
  void mark();
  void popOrPopMark();
  std::vector<PickleValue> popToMark();
  std::vector<PickleValue> popItems(size_t count);
  void put(uint64_t index);
  void get(uint64_t index);

  // Opcodes.
  bool step();
  void protocol();
  void frame();
  void pushLong(uint64_t length);
  void pushFloat();
  void pushText(Kind kind, uint64_t length);
  PickleValue newContainer(Kind kind, std::vector<PickleValue> items = {});
  void pushGlobal(std::string_view module, std::string_view name);
  void stackGlobal();
  void setItems(std::vector<PickleValue> keysAndValues);
  void append(std::vector<PickleValue> items);
  void reduce();
  void build();
  void persistentLoad();

  // The allow-listed calls.
  PickleValue call(Callable callable, const std::string& name, const std::vector<PickleValue>& args);
  PickleValue rebuildTensor(const std::vector<PickleValue>& args);
  PickleValue rebuildParameter(const std::vector<PickleValue>& args);
  PickleValue device(const std::vector<PickleValue>& args);
  PickleValue numpyDtype(const std::vector<PickleValue>& args);
  PickleValue numpyScalar(const std::vector<PickleValue>& args);
  PickleValue encode(const std::vector<PickleValue>& args);
  std::vector<int64_t> nonNegativeInts(const PickleValue& tuple, const char* what);
  void checkInsideStorage(const TensorReference& tensor);
  void requireNoHooks(const PickleValue& hooks);

  int measure(const PickleValue& value, int depth);

  std::string_view input_;
  size_t pos_ = 0;
  size_t opcodeAt_ = 0;
  std::vector<PickleValue> stack_;
  std::vector<size_t> marks_;  // stack_ sizes at the open MARKs
  std::unordered_map<uint64_t, PickleValue> memo_;
  // Every container made, so that the destructor can break reference cycles the result does not keep.
  std::vector<std::shared_ptr<PickleValue::Container>> containers_;
  std::unordered_map<std::string, StorageReference> storages_;
  size_t budget_ = kValueBudget;
  bool succeeded_ = false;
};

PickleMachine::~PickleMachine() {
  stack_.clear();
  memo_.clear();
  // Emptying containers one by one (each still held by containers_) frees cycles without deep
  // recursion; the result's containers are kept.
  for (const auto& box : containers_) {
    if (succeeded_ && box->visit == PickleValue::Container::Visit::Done) continue;
    box->items.clear();
    box->entries.clear();
    box->index.clear();
  }
}

void PickleMachine::fail(const std::string& what) const {
  throw PickleError("pickle byte " + std::to_string(opcodeAt_) + ": " + what);
}

void PickleMachine::charge(size_t bytes) {
  if (bytes > budget_)
    fail("the pickle builds more than " + std::to_string(kValueBudget >> 20) + " MiB of values, far more than a checkpoint's");
  budget_ -= bytes;
}

uint8_t PickleMachine::nextByte() { return static_cast<uint8_t>(take(1)[0]); }

uint64_t PickleMachine::littleEndian(size_t bytes) { return fromLittleEndian(take(bytes)); }

std::string_view PickleMachine::take(uint64_t count) {
  if (count > input_.size() - pos_)
    fail("the pickle ends early (needs " + std::to_string(count) + " more bytes, " +
         std::to_string(input_.size() - pos_) + " left): the file is truncated or damaged");
  const std::string_view part = input_.substr(pos_, count);
  pos_ += count;
  return part;
}

std::string_view PickleMachine::line() {
  const std::string_view rest = input_.substr(pos_, kMaxLine);
  const size_t end = rest.find('\n');
  if (end == std::string_view::npos)
    fail("a GLOBAL name longer than " + std::to_string(kMaxLine) + " bytes or without its line end");
  pos_ += end + 1;
  return rest.substr(0, end);
}

void PickleMachine::push(PickleValue value) {
  if (stack_.size() >= kMaxStack) fail("more than " + std::to_string(kMaxStack) + " values on the stack");
  stack_.push_back(std::move(value));
}

PickleValue PickleMachine::pop() {
  if (stack_.size() <= frameStart()) fail("an opcode takes a value the stack does not hold (damaged pickle)");
  PickleValue value = std::move(stack_.back());
  stack_.pop_back();
  return value;
}

const PickleValue& PickleMachine::top() const {
  if (stack_.size() <= frameStart()) fail("an opcode takes a value the stack does not hold (damaged pickle)");
  return stack_.back();
}

void PickleMachine::mark() {
  if (marks_.size() >= kMaxMarks) fail("more than " + std::to_string(kMaxMarks) + " nested MARKs");
  marks_.push_back(stack_.size());
}

// POP drops the top value, or the innermost mark when none is above it (Python's rule).
void PickleMachine::popOrPopMark() {
  if (!marks_.empty() && stack_.size() == marks_.back())
    marks_.pop_back();
  else
    pop();
}

std::vector<PickleValue> PickleMachine::popToMark() {
  if (marks_.empty()) fail("an opcode closes a MARK that was never opened (damaged pickle)");
  const size_t start = marks_.back();
  marks_.pop_back();
  std::vector<PickleValue> items(std::make_move_iterator(stack_.begin() + static_cast<std::ptrdiff_t>(start)),
                                 std::make_move_iterator(stack_.end()));
  stack_.resize(start);
  return items;
}

std::vector<PickleValue> PickleMachine::popItems(size_t count) {
  if (stack_.size() - frameStart() < count) fail("an opcode takes values the stack does not hold (damaged pickle)");
  std::vector<PickleValue> items(std::make_move_iterator(stack_.end() - static_cast<std::ptrdiff_t>(count)),
                                 std::make_move_iterator(stack_.end()));
  stack_.resize(stack_.size() - count);
  return items;
}

void PickleMachine::put(uint64_t index) {
  const PickleValue& value = top();
  if (memo_.insert_or_assign(index, value).second) charge(64);
}

void PickleMachine::get(uint64_t index) {
  const auto found = memo_.find(index);
  if (found == memo_.end()) fail("the pickle refers to memo entry " + std::to_string(index) + ", never stored");
  push(found->second);
}

PickleValue PickleMachine::run() {
  while (step()) {
  }
  PickleValue result = pop();
  measure(result, 0);
  succeeded_ = true;
  return result;
}

bool PickleMachine::step() {
  opcodeAt_ = pos_;
  const uint8_t opcode = nextByte();
  switch (opcode) {
    case 0x80: protocol(); break;                                       // PROTO
    case 0x95: frame(); break;                                          // FRAME
    case '.': return false;                                             // STOP
    case '(': mark(); break;                                            // MARK
    case '0': popOrPopMark(); break;                                    // POP
    case '1': popToMark(); break;                                       // POP_MARK
    case '2': push(top()); break;                                       // DUP
    case 'N': push(PickleValue()); break;                               // NONE
    case 0x88: push(PickleValue::boolean(true)); break;                 // NEWTRUE
    case 0x89: push(PickleValue::boolean(false)); break;                // NEWFALSE
    case 'J': push(PickleValue::integer(static_cast<int32_t>(littleEndian(4)))); break;  // BININT
    case 'K': push(PickleValue::integer(static_cast<int64_t>(littleEndian(1)))); break;  // BININT1
    case 'M': push(PickleValue::integer(static_cast<int64_t>(littleEndian(2)))); break;  // BININT2
    case 0x8a: pushLong(littleEndian(1)); break;                        // LONG1
    case 0x8b: pushLong(littleEndian(4)); break;                        // LONG4
    case 'G': pushFloat(); break;                                       // BINFLOAT
    case 'X': pushText(Kind::String, littleEndian(4)); break;           // BINUNICODE
    case 0x8c: pushText(Kind::String, littleEndian(1)); break;          // SHORT_BINUNICODE
    case 0x8d: pushText(Kind::String, littleEndian(8)); break;          // BINUNICODE8
    case 'T': pushText(Kind::String, littleEndian(4)); break;           // BINSTRING (str under encoding='utf-8')
    case 'U': pushText(Kind::String, littleEndian(1)); break;           // SHORT_BINSTRING
    case 'B': pushText(Kind::Bytes, littleEndian(4)); break;            // BINBYTES
    case 'C': pushText(Kind::Bytes, littleEndian(1)); break;            // SHORT_BINBYTES
    case 0x8e: pushText(Kind::Bytes, littleEndian(8)); break;           // BINBYTES8
    case ')': push(newContainer(Kind::Tuple)); break;                   // EMPTY_TUPLE
    case ']': push(newContainer(Kind::List)); break;                    // EMPTY_LIST
    case '}': push(newContainer(Kind::Dict)); break;                    // EMPTY_DICT
    case 't': push(newContainer(Kind::Tuple, popToMark())); break;      // TUPLE
    case 0x85: push(newContainer(Kind::Tuple, popItems(1))); break;     // TUPLE1
    case 0x86: push(newContainer(Kind::Tuple, popItems(2))); break;     // TUPLE2
    case 0x87: push(newContainer(Kind::Tuple, popItems(3))); break;     // TUPLE3
    case 'l': push(newContainer(Kind::List, popToMark())); break;       // LIST
    case 'd': {                                                         // DICT
      std::vector<PickleValue> keysAndValues = popToMark();
      push(newContainer(Kind::Dict));
      setItems(std::move(keysAndValues));
      break;
    }
    case 'a': append(popItems(1)); break;                               // APPEND
    case 'e': append(popToMark()); break;                               // APPENDS
    case 's': setItems(popItems(2)); break;                             // SETITEM
    case 'u': setItems(popToMark()); break;                             // SETITEMS
    case 'c': {                                                         // GLOBAL
      const std::string_view module = line();
      pushGlobal(module, line());
      break;
    }
    case 0x93: stackGlobal(); break;                                    // STACK_GLOBAL
    case 'R': reduce(); break;                                          // REDUCE
    case 'b': build(); break;                                           // BUILD
    case 'Q': persistentLoad(); break;                                  // BINPERSID
    case 'q': put(littleEndian(1)); break;                              // BINPUT
    case 'r': put(littleEndian(4)); break;                              // LONG_BINPUT
    case 0x94: put(memo_.size()); break;                                // MEMOIZE
    case 'h': get(littleEndian(1)); break;                              // BINGET
    case 'j': get(littleEndian(4)); break;                              // LONG_BINGET
    default: {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", opcode);
      fail(std::string("pickle opcode ") + hex + ", which torch.save does not write for a checkpoint");
    }
  }
  return true;
}

void PickleMachine::protocol() {
  const uint8_t version = nextByte();
  if (version > 5) fail("pickle protocol " + std::to_string(version) + " (this reader knows protocols up to 5)");
}

// FRAME announces the length of the opcodes that follow, for buffered reading: only checked here.
void PickleMachine::frame() {
  const uint64_t length = littleEndian(8);
  if (length > input_.size() - pos_) fail("a FRAME longer than the rest of the pickle: the file is truncated or damaged");
}

// LONG1/LONG4: a little-endian two's-complement integer of `length` bytes.
void PickleMachine::pushLong(uint64_t length) {
  if (length > 8) fail("an integer wider than 64 bits, which no checkpoint value needs");
  const std::string_view raw = take(length);
  uint64_t bits = fromLittleEndian(raw);
  if (length > 0 && length < 8 && (static_cast<uint8_t>(raw[length - 1]) & 0x80)) bits |= ~uint64_t{0} << (8 * length);
  push(PickleValue::integer(static_cast<int64_t>(bits)));
}

// BINFLOAT: an IEEE double, big-endian.
void PickleMachine::pushFloat() {
  const std::string_view raw = take(8);
  uint64_t bits = 0;
  for (const char c : raw) bits = (bits << 8) | static_cast<uint8_t>(c);
  double value = 0;
  std::memcpy(&value, &bits, sizeof value);
  push(PickleValue::real(value));
}

void PickleMachine::pushText(Kind kind, uint64_t length) {
  const std::string_view raw = take(length);  // checked against the input before any allocation
  charge(64 + raw.size());
  push(PickleValue::text(kind, std::string(raw)));
}

PickleValue PickleMachine::newContainer(Kind kind, std::vector<PickleValue> items) {
  charge(kContainerCost + items.size() * sizeof(PickleValue));
  auto box = std::make_shared<PickleValue::Container>();
  box->items = std::move(items);
  containers_.push_back(box);
  return PickleValue::container(kind, std::move(box));
}

void PickleMachine::pushGlobal(std::string_view module, std::string_view name) {
  const std::string dotted = std::string(module) + "." + std::string(name);
  if (!allowedGlobal(dotted))
    throw PickleError("the pickle asks for the global '" + printable(dotted) +
                      "', which MedSeg never runs; only " + allowedGlobalNames() +
                      " are read (a file that needs others is not a plain PyTorch checkpoint and may run code in Python)");
  charge(64 + dotted.size());
  push(PickleValue::text(Kind::Global, dotted));
}

void PickleMachine::stackGlobal() {
  const PickleValue name = pop();
  const PickleValue module = pop();
  if (name.kind() != Kind::String || module.kind() != Kind::String) fail("STACK_GLOBAL without two strings");
  pushGlobal(module.asString(), name.asString());
}

void PickleMachine::setItems(std::vector<PickleValue> keysAndValues) {
  const PickleValue& target = top();
  if (target.kind() != Kind::Dict) fail("SETITEM on " + target.kindName() + ", not a dict");
  if (keysAndValues.size() % 2 != 0) fail("SETITEMS with a key but no value");
  charge(keysAndValues.size() / 2 * (sizeof(PickleValue::Entry) + 64));
  PickleValue::Container& dict = target.box();
  for (size_t i = 0; i < keysAndValues.size(); i += 2) {
    PickleValue& key = keysAndValues[i];
    size_t hash = 0;
    try {
      hash = keyHash(key);
    } catch (const PickleError& error) {
      fail(error.what());
    }
    const auto [begin, end] = dict.index.equal_range(hash);
    const auto same = std::find_if(begin, end, [&](const auto& slot) { return sameKey(dict.entries[slot.second].first, key); });
    if (same != end) {
      dict.entries[same->second].second = std::move(keysAndValues[i + 1]);  // Python: the later value wins
      continue;
    }
    dict.index.emplace(hash, dict.entries.size());
    dict.entries.emplace_back(std::move(key), std::move(keysAndValues[i + 1]));
  }
}

void PickleMachine::append(std::vector<PickleValue> items) {
  const PickleValue& target = top();
  if (target.kind() != Kind::List) fail("APPEND to " + target.kindName() + ", not a list");
  charge(items.size() * sizeof(PickleValue));
  auto& list = target.box().items;
  list.insert(list.end(), std::make_move_iterator(items.begin()), std::make_move_iterator(items.end()));
}

void PickleMachine::reduce() {
  const PickleValue args = pop();
  const PickleValue callable = pop();
  if (callable.kind() != Kind::Global) fail("REDUCE calls " + callable.kindName() + ", not an allowed class or function");
  if (args.kind() != Kind::Tuple) fail("REDUCE with arguments that are " + args.kindName() + ", not a tuple");
  const std::string& name = callable.asString();
  push(call(*allowedGlobal(name), name, args.items()));  // only allow-listed names become a Global
}

// BUILD sets an object's state. Checkpoints use it on two objects: an OrderedDict's attributes (a state
// dict's `_metadata`, the modules' versions, which inference does not need: dropped) and a NumPy dtype's
// state (only its byte order matters: big-endian values are refused).
void PickleMachine::build() {
  const PickleValue state = pop();
  const PickleValue& target = top();
  const auto attributes = [](const PickleValue& v) { return v.kind() == Kind::Dict || v.isNone(); };
  if (target.kind() == Kind::Dict) {
    const bool withSlots = state.kind() == Kind::Tuple && state.items().size() == 2 &&
                           attributes(state.items()[0]) && attributes(state.items()[1]);
    if (!attributes(state) && !withSlots) fail("BUILD of a dict with " + state.kindName() + " as its state");
    return;
  }
  if (target.kind() == Kind::NumpyDtype) {
    if (state.kind() != Kind::Tuple || state.items().size() < 2 || state.items()[1].kind() != Kind::String)
      fail("BUILD of a NumPy dtype without its byte order");
    const std::string& order = state.items()[1].asString();
    if (order == ">") fail("a big-endian NumPy value, which MedSeg does not read");
    if (order != "<" && order != "|" && order != "=") fail("a NumPy dtype with byte order '" + printable(order) + "'");
    return;
  }
  fail("BUILD of " + target.kindName() + ", which a checkpoint never does");
}

// BINPERSID: torch.save names each storage ('storage', torch.<Type>Storage, key, location, elements).
void PickleMachine::persistentLoad() {
  const PickleValue id = pop();
  if (id.kind() != Kind::Tuple || id.items().size() != 5) fail("a persistent id that is not a torch storage");
  const auto& parts = id.items();
  if (parts[0].kind() != Kind::String || parts[0].asString() != "storage" || parts[1].kind() != Kind::Global ||
      parts[2].kind() != Kind::String || parts[4].kind() != Kind::Int)
    fail("a persistent id that is not a torch storage");
  const auto type = storageClass(parts[1].asString());
  if (!type) fail("a storage of type " + parts[1].asString());
  StorageReference storage{parts[2].asString(), *type, parts[4].asInt()};
  if (storage.key.empty() || storage.key.size() > kMaxLine)
    fail("a storage key of " + std::to_string(storage.key.size()) + " bytes");
  if (storage.elements < 0 || storage.elements > std::numeric_limits<int64_t>::max() / 8)
    fail("storage '" + printable(storage.key) + "' declares " + std::to_string(storage.elements) + " elements");
  const auto [known, inserted] = storages_.emplace(storage.key, storage);
  if (inserted) {
    charge(128 + storage.key.size());
  } else if (known->second.type != storage.type || known->second.elements != storage.elements) {
    fail("storage '" + printable(storage.key) + "' is declared twice with different types or lengths");
  }
  charge(128);
  push(PickleValue::storage(std::move(storage)));
}

PickleValue PickleMachine::call(Callable callable, const std::string& name, const std::vector<PickleValue>& args) {
  switch (callable) {
    case Callable::OrderedDict:
      if (!args.empty()) fail("OrderedDict called with arguments");
      return newContainer(Kind::Dict);
    case Callable::RebuildTensor: return rebuildTensor(args);
    case Callable::RebuildParameter: return rebuildParameter(args);
    case Callable::Device: return device(args);
    case Callable::NumpyDtype: return numpyDtype(args);
    case Callable::NumpyScalar: return numpyScalar(args);
    case Callable::Encode: return encode(args);
    case Callable::StorageClass: break;
  }
  fail("a call of " + name + ", which checkpoints only name in storage ids");
}

std::vector<int64_t> PickleMachine::nonNegativeInts(const PickleValue& tuple, const char* what) {
  if (tuple.kind() != Kind::Tuple) fail(std::string("a tensor whose ") + what + " is " + tuple.kindName());
  if (tuple.items().size() > kMaxRank) fail("a tensor of more than " + std::to_string(kMaxRank) + " dimensions");
  std::vector<int64_t> values;
  for (const auto& item : tuple.items()) {
    if (item.kind() != Kind::Int || item.asInt() < 0) fail(std::string("a tensor with a negative or non-integer ") + what);
    values.push_back(item.asInt());
  }
  return values;
}

// Every element the view addresses, offset + sum((size - 1) * stride), must lie in the storage, and
// its element count must fit in 64 bits: the reader may then make the view as it is.
void PickleMachine::checkInsideStorage(const TensorReference& tensor) {
  const auto outside = [&] {
    fail("a tensor on storage '" + printable(tensor.storage.key) + "' (" + std::to_string(tensor.storage.elements) +
         " elements) reaches past the storage's end: the file is damaged or forged");
  };
  int64_t count = 1;
  int64_t last = tensor.storageOffset;
  for (size_t d = 0; d < tensor.sizes.size(); ++d) {
    if (__builtin_mul_overflow(count, tensor.sizes[d], &count)) fail("a tensor with more than 2^63 elements");
    if (tensor.sizes[d] == 0) continue;
    int64_t reach = 0;
    if (__builtin_mul_overflow(tensor.sizes[d] - 1, tensor.strides[d], &reach) || __builtin_add_overflow(last, reach, &last))
      outside();
  }
  if (count == 0 ? tensor.storageOffset > tensor.storage.elements : last >= tensor.storage.elements) outside();
}

// Backward hooks are Python functions: a tensor that brings any is refused, not rebuilt without them.
void PickleMachine::requireNoHooks(const PickleValue& hooks) {
  if (hooks.kind() != Kind::Dict || !hooks.entries().empty()) fail("a tensor with backward hooks");
}

// _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])
PickleValue PickleMachine::rebuildTensor(const std::vector<PickleValue>& args) {
  if (args.size() != 6 && args.size() != 7) fail("_rebuild_tensor_v2 with " + std::to_string(args.size()) + " arguments");
  if (args[0].kind() != Kind::Storage) fail("_rebuild_tensor_v2 of " + args[0].kindName() + ", not a storage");
  if (args[1].kind() != Kind::Int || args[1].asInt() < 0) fail("a tensor with a negative or non-integer offset");
  if (args[4].kind() != Kind::Bool) fail("a tensor whose requires_grad is " + args[4].kindName());
  requireNoHooks(args[5]);
  TensorReference tensor{args[0].asStorage(), args[1].asInt(), nonNegativeInts(args[2], "size"),
                         nonNegativeInts(args[3], "stride"), args[4].asBool()};
  if (tensor.sizes.size() != tensor.strides.size()) fail("a tensor with more or fewer strides than sizes");
  checkInsideStorage(tensor);
  charge(128 + 16 * tensor.sizes.size());
  return PickleValue::tensor(std::move(tensor));
}

// _rebuild_parameter(data, requires_grad, backward_hooks): an nn.Parameter is its tensor here.
PickleValue PickleMachine::rebuildParameter(const std::vector<PickleValue>& args) {
  if (args.size() != 3 || args[0].kind() != Kind::Tensor || args[1].kind() != Kind::Bool)
    fail("_rebuild_parameter without (tensor, requires_grad, hooks)");
  requireNoHooks(args[2]);
  TensorReference tensor = args[0].asTensor();
  tensor.requiresGrad = args[1].asBool();
  charge(128 + 16 * tensor.sizes.size());
  return PickleValue::tensor(std::move(tensor));
}

// torch.device(type) or torch.device(type, index): kept as "type" or "type:index".
PickleValue PickleMachine::device(const std::vector<PickleValue>& args) {
  if (args.empty() || args.size() > 2 || args[0].kind() != Kind::String || args[0].asString().size() > 64)
    fail("torch.device without a device type");
  std::string name = args[0].asString();
  if (args.size() == 2 && !args[1].isNone()) {
    if (args[1].kind() != Kind::Int || args[1].asInt() < 0) fail("torch.device with a bad index");
    name += ":" + std::to_string(args[1].asInt());
  }
  charge(64 + name.size());
  return PickleValue::text(Kind::Device, std::move(name));
}

namespace {
// The NumPy scalar types a checkpoint's logs and counters use, by dtype code.
struct NumpyType {
  const char* code;
  size_t bytes;
  char kind;  // 'f' float, 'i' signed, 'u' unsigned, 'b' bool
};
constexpr NumpyType kNumpyTypes[] = {{"f8", 8, 'f'}, {"f4", 4, 'f'}, {"i8", 8, 'i'}, {"i4", 4, 'i'}, {"i2", 2, 'i'},
                                     {"i1", 1, 'i'}, {"u8", 8, 'u'}, {"u4", 4, 'u'}, {"u2", 2, 'u'}, {"u1", 1, 'u'},
                                     {"b1", 1, 'b'}};

const NumpyType* numpyType(std::string_view code) {
  for (const auto& type : kNumpyTypes)
    if (code == type.code) return &type;
  return nullptr;
}
}  // namespace

// numpy.dtype(code, align, copy)
PickleValue PickleMachine::numpyDtype(const std::vector<PickleValue>& args) {
  if (args.empty() || args.size() > 3 || args[0].kind() != Kind::String) fail("numpy.dtype without a type code");
  if (!numpyType(args[0].asString()))
    fail("a NumPy value of dtype '" + printable(args[0].asString()) + "', which MedSeg does not read");
  charge(64 + args[0].asString().size());
  return PickleValue::text(Kind::NumpyDtype, args[0].asString());
}

// numpy.core.multiarray.scalar(dtype, raw bytes): the value as the checkpoint's number kinds.
PickleValue PickleMachine::numpyScalar(const std::vector<PickleValue>& args) {
  if (args.size() != 2 || args[0].kind() != Kind::NumpyDtype || args[1].kind() != Kind::Bytes)
    fail("a NumPy scalar without (dtype, bytes)");
  const NumpyType& type = *numpyType(args[0].asString());  // numpyDtype admitted only known codes
  const std::string& raw = args[1].asString();
  if (raw.size() != type.bytes) fail("a NumPy " + std::string(type.code) + " scalar of " + std::to_string(raw.size()) + " bytes");
  uint64_t bits = fromLittleEndian(raw);
  if (type.kind == 'b') return PickleValue::boolean(bits != 0);
  if (type.kind == 'f') {
    if (type.bytes == 8) {
      double value = 0;
      std::memcpy(&value, &bits, sizeof value);
      return PickleValue::real(value);
    }
    const auto narrow = static_cast<uint32_t>(bits);
    float value = 0;
    std::memcpy(&value, &narrow, sizeof value);
    return PickleValue::real(value);
  }
  if (type.kind == 'u') {
    if (bits > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) fail("a NumPy uint64 beyond 2^63");
    return PickleValue::integer(static_cast<int64_t>(bits));
  }
  const unsigned width = 8 * static_cast<unsigned>(type.bytes);
  if (width < 64 && (bits >> (width - 1)) != 0) bits |= ~uint64_t{0} << width;  // sign-extend
  return PickleValue::integer(static_cast<int64_t>(bits));
}

// _codecs.encode(text, 'latin1'): how protocol 2 stores bytes (of NumPy scalars) as a str.
PickleValue PickleMachine::encode(const std::vector<PickleValue>& args) {
  if (args.size() != 2 || args[0].kind() != Kind::String || args[1].kind() != Kind::String)
    fail("_codecs.encode without (text, encoding)");
  const std::string& encoding = args[1].asString();
  std::optional<std::string> raw;
  if (encoding == "latin1" || encoding == "latin-1" || encoding == "iso-8859-1")
    raw = latin1FromUtf8(args[0].asString());
  else if (encoding == "utf-8" || encoding == "utf8")
    raw = args[0].asString();
  else
    fail("_codecs.encode with encoding '" + printable(encoding) + "'");
  if (!raw) fail("_codecs.encode of text that is not Latin-1");
  charge(64 + raw->size());
  return PickleValue::text(Kind::Bytes, std::move(*raw));
}

// The result's containers: no cycles, nesting bounded (so that walking or destroying the result
// recurses at most kMaxPickleNesting deep). Heights are kept so a shared container is walked once.
int PickleMachine::measure(const PickleValue& value, int depth) {
  const auto* held = std::get_if<std::shared_ptr<PickleValue::Container>>(&value.payload_);
  if (!held) return 0;
  using Visit = PickleValue::Container::Visit;
  PickleValue::Container& box = **held;
  if (box.visit == Visit::Open) fail("a value that contains itself, which no checkpoint holds");
  if (box.visit == Visit::No) {
    if (depth >= kMaxPickleNesting) fail("values nested more than " + std::to_string(kMaxPickleNesting) + " deep");
    box.visit = Visit::Open;
    int height = 0;
    for (const auto& item : box.items) height = std::max(height, measure(item, depth + 1));
    for (const auto& [key, entry] : box.entries)
      height = std::max({height, measure(key, depth + 1), measure(entry, depth + 1)});
    box.height = height + 1;
    box.visit = Visit::Done;
  }
  if (depth + box.height > kMaxPickleNesting)
    fail("values nested more than " + std::to_string(kMaxPickleNesting) + " deep");
  return box.height;
}

}  // namespace detail

PickleValue readRestrictedPickle(std::string_view bytes) {
  detail::PickleMachine machine(bytes);
  return machine.run();
}

}  // namespace medseg::nnunet
