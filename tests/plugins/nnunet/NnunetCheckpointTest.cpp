// nnU-Net v2 checkpoints read without Python: the four fixture models (made by nnU-Net v2.5.2, see
// tests/data/nnunet/README.md) against the values torch.load gives for them, and forged, damaged or
// foreign files refused with an InputError that names the file and the reason. The forged inputs are
// written here, opcode by opcode and zip record by zip record.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>

#include "plugins/nnunet/NnunetCheckpoint.h"
#include "support/TestSupport.h"

namespace medseg::nnunet {
namespace {
namespace fs = std::filesystem;
using Kind = PickleValue::Kind;

fs::path fixturePath(const std::string& rel) { return fs::path(MEDSEG_SOURCE_DIR) / "tests/data/nnunet" / rel; }

std::string checkpointOf(const std::string& dataset, const std::string& plans, int fold) {
  return "models/" + dataset + "/nnUNetTrainer__" + plans + "__3d_fullres/fold_" + std::to_string(fold) +
         "/checkpoint_final.pth";
}
const std::string k911Plain = checkpointOf("Dataset911_SynthBraTSRegions", "nnUNetPlansSmall", 0);
const std::string k911ResEnc = checkpointOf("Dataset911_SynthBraTSRegions", "nnUNetResEncSmall", 0);

std::string fileBytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The fuzz target's seeds double as test data: a fixture's data.pkl and pickles torch.save wrote.
std::string corpusBytes(const std::string& name) {
  return fileBytes(fs::path(MEDSEG_SOURCE_DIR) / "tests/fuzz/corpus/torch-pickle" / name);
}

void writeFile(const fs::path& file, const std::string& bytes) {
  std::ofstream(file, std::ios::binary) << bytes;
}

std::string littleEndian(uint64_t value, int bytes) {
  std::string out;
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((value >> (8 * i)) & 0xFF);
  return out;
}

// A zip of stored entries, laid out as torch.save writes one (less its alignment padding).
std::string zipOf(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string out;
  std::string directory;
  for (const auto& [name, data] : entries) {
    const uint32_t crc = crc32(0, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size()));
    const std::string common = littleEndian(0, 2) + littleEndian(0, 2) + littleEndian(0, 4) + littleEndian(crc, 4) +
                               littleEndian(data.size(), 4) + littleEndian(data.size(), 4) + littleEndian(name.size(), 2) +
                               littleEndian(0, 2);  // flags, method 0 (stored), time and date, crc, sizes, name, extra
    directory += littleEndian(0x02014b50, 4) + littleEndian(20, 2) + littleEndian(20, 2) + common + littleEndian(0, 2) +
                 littleEndian(0, 2) + littleEndian(0, 2) + littleEndian(0, 4) + littleEndian(out.size(), 4) + name;
    out += littleEndian(0x04034b50, 4) + littleEndian(20, 2) + common + name + data;
  }
  const size_t directoryOffset = out.size();
  return out + directory + littleEndian(0x06054b50, 4) + littleEndian(0, 4) + littleEndian(entries.size(), 2) +
         littleEndian(entries.size(), 2) + littleEndian(directory.size(), 4) + littleEndian(directoryOffset, 4) +
         littleEndian(0, 2);
}

std::string floatBytes(const std::vector<float>& values) {
  std::string out(values.size() * sizeof(float), '\0');
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

// Pickle opcodes written by hand (protocol 2, as torch.save writes them).
struct Pickle {
  std::string bytes = "\x80\x02";

  Pickle& op(const std::string& opcodes) {
    bytes += opcodes;
    return *this;
  }
  Pickle& global(const std::string& module, const std::string& name) { return op("c" + module + "\n" + name + "\n"); }
  Pickle& text(const std::string& value) { return op("X" + littleEndian(value.size(), 4) + value); }
  Pickle& small(int value) { return op(std::string("K") + static_cast<char>(value)); }
  Pickle& ints(const std::vector<int>& values) {
    op("(");
    for (const int value : values) small(value);
    return op("t");
  }
  // _rebuild_tensor_v2(storage, offset, sizes, strides, False, OrderedDict()), the storage named by the
  // persistent id ('storage', torch.<type>, key, 'cpu', elements).
  Pickle& tensor(const std::string& key, int elements, int offset, const std::vector<int>& sizes,
                 const std::vector<int>& strides, const std::string& type = "FloatStorage") {
    global("torch._utils", "_rebuild_tensor_v2").op("((").text("storage").global("torch", type).text(key).text("cpu");
    small(elements).op("tQ").small(offset).ints(sizes).ints(strides).op("\x89");
    return global("collections", "OrderedDict").op(")R").op("tR");
  }
  std::string done() const { return bytes + "."; }
};

// The dict nnUNetTrainer.save_checkpoint writes, with network_weights filled by `weights` (opcodes
// that push name, tensor pairs) and the mirroring axes (0, 1, 2).
std::string checkpointPickle(const std::function<void(Pickle&)>& weights) {
  Pickle pickle;
  pickle.op("}(").text("network_weights").global("collections", "OrderedDict").op(")R(");
  weights(pickle);
  pickle.op("u").text("trainer_name").text("nnUNetTrainer").text("inference_allowed_mirroring_axes");
  pickle.small(0).small(1).small(2).op("\x87u");
  return pickle.done();
}

// A checkpoint archive whose one weight "w" is a view (offset, sizes, strides) of storage 0, declared
// with 4 float elements; its record holds `record`, or is absent when empty.
std::string oneWeightCheckpoint(int offset, const std::vector<int>& sizes, const std::vector<int>& strides,
                                const std::vector<float>& record) {
  const std::string pickle = checkpointPickle([&](Pickle& p) { p.text("w").tensor("0", 4, offset, sizes, strides); });
  if (record.empty()) return zipOf({{"c/data.pkl", pickle}});
  return zipOf({{"c/data.pkl", pickle}, {"c/data/0", floatBytes(record)}});
}

std::string messageOf(const std::function<void()>& read) { return test::inputErrorMessageOf(read); }

std::string pickleMessage(const std::string& bytes) {
  return messageOf([&] { readRestrictedPickle(bytes); });
}

// ---- The fixture models ----

TEST(NnunetCheckpoint, ReadsThePlainConvUNetRegionModel) {
  const NnunetCheckpoint checkpoint = readNnunetCheckpoint(fixturePath(k911Plain));
  const auto& weights = checkpoint.networkWeights;
  ASSERT_EQ(weights.size(), 188u);
  EXPECT_EQ(checkpoint.info.trainerName, "nnUNetTrainer");
  EXPECT_EQ(checkpoint.info.configuration, std::optional<std::string>("3d_fullres"));
  EXPECT_EQ(checkpoint.info.inferenceAllowedMirroringAxes, std::optional<std::vector<int64_t>>({0, 1, 2}));
  EXPECT_EQ(weights[0].key(), "encoder.stages.0.0.convs.0.conv.weight");

  const torch::Tensor first = weights["encoder.stages.0.0.convs.0.conv.weight"];
  EXPECT_EQ(first.sizes(), (std::vector<int64_t>{4, 4, 3, 3, 3}));
  EXPECT_EQ(first.scalar_type(), torch::kFloat);
  EXPECT_FLOAT_EQ(first.flatten()[0].item<float>(), 0.07957657426595688f);
  EXPECT_FLOAT_EQ(first.flatten()[2].item<float>(), 0.11267410963773727f);
  EXPECT_FLOAT_EQ(first.flatten()[-1].item<float>(), 0.019499365240335464f);
  EXPECT_NEAR(first.to(torch::kDouble).sum().item<double>(), 6.126052848521795, 1e-6);
  const torch::Tensor deep = weights["encoder.stages.3.0.convs.1.conv.weight"];
  EXPECT_EQ(deep.sizes(), (std::vector<int64_t>{32, 32, 3, 3, 3}));
  EXPECT_FLOAT_EQ(deep[5][7][1][2][0].item<float>(), 0.01972421072423458f);
  EXPECT_FLOAT_EQ(deep[31][31][2][2][2].item<float>(), 0.006028065457940102f);

  const torch::Tensor head = weights["decoder.seg_layers.2.weight"];
  EXPECT_EQ(head.sizes(), (std::vector<int64_t>{3, 4, 1, 1, 1}));
  EXPECT_NEAR(head.to(torch::kDouble).sum().item<double>(), -10.376947939395905, 1e-6);
  const torch::Tensor bias = weights["decoder.seg_layers.2.bias"];
  ASSERT_EQ(bias.sizes(), (std::vector<int64_t>{3}));
  EXPECT_FLOAT_EQ(bias[0].item<float>(), -2.2510011196136475f);
  EXPECT_FLOAT_EQ(bias[1].item<float>(), -3.696340799331665f);
  EXPECT_FLOAT_EQ(bias[2].item<float>(), -3.3693342208862305f);

  // One storage, four names: they are one parameter in nnU-Net's network.
  for (const char* alias : {"encoder.stages.0.0.convs.0.all_modules.0.weight", "decoder.encoder.stages.0.0.convs.0.conv.weight",
                            "decoder.encoder.stages.0.0.convs.0.all_modules.0.weight"})
    EXPECT_EQ(weights[alias].data_ptr(), first.data_ptr()) << alias;
}

TEST(NnunetCheckpoint, ReadsTheResidualEncoderModel) {
  const NnunetCheckpoint checkpoint = readNnunetCheckpoint(fixturePath(k911ResEnc));
  const auto& weights = checkpoint.networkWeights;
  ASSERT_EQ(weights.size(), 536u);
  EXPECT_EQ(checkpoint.info.inferenceAllowedMirroringAxes, std::optional<std::vector<int64_t>>({0, 1, 2}));
  const torch::Tensor stem = weights["encoder.stem.convs.0.conv.weight"];
  EXPECT_EQ(stem.sizes(), (std::vector<int64_t>{4, 4, 3, 3, 3}));
  EXPECT_FLOAT_EQ(stem.flatten()[0].item<float>(), -0.1990477740764618f);
  EXPECT_NEAR(stem.to(torch::kDouble).sum().item<double>(), 4.2324453291948885, 1e-6);
  const torch::Tensor skip = weights["encoder.stages.1.blocks.0.skip.1.conv.weight"];
  EXPECT_EQ(skip.sizes(), (std::vector<int64_t>{6, 4, 1, 1, 1}));
  EXPECT_FLOAT_EQ(skip.flatten()[0].item<float>(), 0.5934681296348572f);
  EXPECT_FLOAT_EQ(skip.flatten()[1].item<float>(), 0.8044089674949646f);
  EXPECT_EQ(weights.find("encoder.stages.1.blocks.0.skip.1.conv.bias"), nullptr);  // 1x1x1 skip convs have none
  EXPECT_EQ(weights["decoder.encoder.stages.1.blocks.0.skip.1.conv.weight"].data_ptr(), skip.data_ptr());
  EXPECT_FLOAT_EQ(weights["decoder.seg_layers.2.bias"][1].item<float>(), -2.7888503074645996f);
}

TEST(NnunetCheckpoint, ReadsBothFoldsOfTheLabelModel) {
  const std::vector<std::vector<float>> headBias = {
      {7.310309886932373f, 2.029526472091675f, -3.581251859664917f, -5.7581610679626465f},
      {7.310108661651611f, 1.8787134885787964f, -3.5770556926727295f, -5.611196041107178f}};
  for (int fold = 0; fold < 2; ++fold) {
    SCOPED_TRACE("fold " + std::to_string(fold));
    const auto file = fixturePath(checkpointOf("Dataset912_SynthBraTSLabels", "nnUNetPlansSmall", fold));
    const NnunetCheckpoint checkpoint = readNnunetCheckpoint(file);
    ASSERT_EQ(checkpoint.networkWeights.size(), 188u);
    EXPECT_EQ(checkpoint.info.configuration, std::optional<std::string>("3d_fullres"));
    const torch::Tensor bias = checkpoint.networkWeights["decoder.seg_layers.2.bias"];
    ASSERT_EQ(bias.numel(), 4);
    for (int c = 0; c < 4; ++c) EXPECT_FLOAT_EQ(bias[c].item<float>(), headBias[fold][c]) << "class " << c;
  }
}

// The rest of the fixture's pickle (its data.pkl is a seed of the fuzz corpus): NumPy scalars made by
// _codecs.encode, torch.device, the plans and optimizer dicts, as torch.load reads them.
TEST(TorchPickle, ReadsTheWholeDictOfAnNnunetCheckpoint) {
  const PickleValue root = readRestrictedPickle(corpusBytes("nnunet-911-plain-data.pkl"));
  ASSERT_EQ(root.kind(), Kind::Dict);
  ASSERT_EQ(root.entries().size(), 9u);
  EXPECT_EQ(root.entries()[0].first.asString(), "network_weights");
  EXPECT_DOUBLE_EQ(root.find("_best_ema")->asFloat(), 0.33461965194621135);
  EXPECT_EQ(root.find("current_epoch")->asInt(), 4);
  EXPECT_TRUE(root.find("grad_scaler_state")->isNone());
  const PickleValue& logging = *root.find("logging");
  ASSERT_EQ(logging.find("mean_fg_dice")->items().size(), 4u);
  EXPECT_DOUBLE_EQ(logging.find("mean_fg_dice")->items()[0].asFloat(), 0.27895854797064396);
  EXPECT_FLOAT_EQ(static_cast<float>(logging.find("train_losses")->items()[0].asFloat()), 0.14124665f);  // numpy float32
  EXPECT_DOUBLE_EQ(logging.find("lrs")->items()[0].asFloat(), 0.01);
  const PickleValue& initArgs = *root.find("init_args");
  EXPECT_EQ(initArgs.find("device")->kind(), Kind::Device);
  EXPECT_EQ(initArgs.find("device")->asString(), "cpu");
  EXPECT_EQ(initArgs.find("fold")->asInt(), 0);
  EXPECT_TRUE(initArgs.find("unpack_dataset")->asBool());
  const PickleValue& patch = *initArgs.find("plans")->find("configurations")->find("3d_fullres")->find("patch_size");
  ASSERT_EQ(patch.items().size(), 3u);
  EXPECT_EQ(patch.items()[1].asInt(), 40);
  const PickleValue& group = root.find("optimizer_state")->find("param_groups")->items()[0];
  EXPECT_DOUBLE_EQ(group.find("lr")->asFloat(), 0.0028717458874925874);
  EXPECT_TRUE(group.find("nesterov")->asBool());
  EXPECT_TRUE(group.find("foreach")->isNone());
  EXPECT_EQ(group.find("params")->items().size(), 68u);
  const PickleValue& state = *root.find("optimizer_state")->find("state");
  EXPECT_EQ(state.entries().size(), 66u);
  EXPECT_EQ(state.entries()[0].first.asInt(), 0);  // int keys
  EXPECT_EQ(state.entries()[0].second.find("momentum_buffer")->asTensor().sizes, (std::vector<int64_t>{4, 4, 3, 3, 3}));
}

// torch.save with pickle_protocol=4 (FRAME, SHORT_BINUNICODE, MEMOIZE, STACK_GLOBAL) reads as protocol 2.
TEST(TorchPickle, ReadsProtocolTwoAndFourAlike) {
  for (const char* name : {"tiny-checkpoint-protocol2.pkl", "tiny-checkpoint-protocol4.pkl"}) {
    SCOPED_TRACE(name);
    const auto contents = interpretNnunetPickle(readRestrictedPickle(corpusBytes(name)));
    ASSERT_EQ(contents.networkWeights.size(), 4u);
    EXPECT_EQ(contents.info.configuration, std::optional<std::string>("2d"));
    EXPECT_FALSE(contents.info.inferenceAllowedMirroringAxes);  // None
    const TensorReference& weight = contents.networkWeights[0].second;
    EXPECT_EQ(weight.sizes, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(weight.strides, (std::vector<int64_t>{3, 1}));
    EXPECT_EQ(contents.networkWeights[2].second.storage.key, weight.storage.key);  // the same tensor twice
    const TensorReference& tail = contents.networkWeights[3].second;  // w[1]: a view at offset 3
    EXPECT_EQ(tail.storageOffset, 3);
    EXPECT_EQ(tail.sizes, (std::vector<int64_t>{3}));
  }
}

TEST(TorchPickle, ReadsNumpyScalarsOfEachKind) {
  const PickleValue root = readRestrictedPickle(corpusBytes("numpy-scalars.pkl"));
  EXPECT_DOUBLE_EQ(root.find("f8")->asFloat(), 0.25);
  EXPECT_EQ(root.find("i8")->asInt(), -3);
  EXPECT_TRUE(root.find("b")->asBool());
  EXPECT_DOUBLE_EQ(root.find("f4")->asFloat(), 1.5);
  const auto& tuple = root.find("t")->items();
  ASSERT_EQ(tuple.size(), 5u);
  EXPECT_EQ(tuple[2].asString(), "x");
  EXPECT_EQ(tuple[4].kind(), Kind::Bytes);
  EXPECT_EQ(tuple[4].asString(), std::string("\x00\xff", 2));
}

// ---- Pickles that would run code ----

TEST(TorchPickle, RefusesGlobalsThatRunCodeByName) {
  test::ScratchDir dir("nnunet-pickle-globals");
  const std::string witness = (dir / "ran").string();
  const auto call = [&](const std::string& module, const std::string& name) {
    return Pickle().global(module, name).text("touch " + witness).op("\x85R").done();
  };
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"os", "system"}, {"posix", "system"}, {"builtins", "eval"}, {"builtins", "exec"}, {"subprocess", "Popen"},
      {"torch", "load"}, {"collections", "OrderedDictX"}, {"torch._utils", "_rebuild_device_tensor_from_numpy"}};
  for (const auto& [module, name] : refused) {
    const std::string message = pickleMessage(call(module, name));
    EXPECT_NE(message.find("the global '" + module + "." + name + "', which MedSeg never runs"), std::string::npos) << message;
  }
  // Protocol 4 names its globals from the stack (STACK_GLOBAL).
  const std::string stackGlobal = std::string("\x80\x04\x8c\x02os\x8c\x06system\x93X") + littleEndian(4, 4) + "true\x85R.";
  EXPECT_NE(pickleMessage(stackGlobal).find("'os.system'"), std::string::npos) << pickleMessage(stackGlobal);
  EXPECT_FALSE(fs::exists(witness));
  // Through a checkpoint, the message names the file.
  const fs::path file = dir / "fold_0" / "checkpoint_final.pth";
  fs::create_directories(file.parent_path());
  writeFile(file, zipOf({{"checkpoint_final/data.pkl", call("os", "system")}, {"checkpoint_final/version", "3\n"}}));
  const std::string message = messageOf([&] { readNnunetCheckpoint(file); });
  const std::string expected = ": the pickle asks for the global 'os.system', which MedSeg never runs; only ";
  EXPECT_EQ(message.rfind(file.string() + expected, 0), 0u) << message;
}

// ---- Damaged and forged pickles ----

TEST(TorchPickle, RefusesDamagedAndForgedPicklesClearly) {
  std::string deep = "\x80\x02";
  for (int i = 0; i < 150; ++i) deep += "]";
  for (int i = 0; i < 149; ++i) deep += "a";
  deep += ".";
  Pickle hooks;  // a tensor whose backward_hooks argument is {1: 2}
  hooks.global("torch._utils", "_rebuild_tensor_v2").op("((").text("storage").global("torch", "FloatStorage");
  hooks.text("0").text("cpu").small(4).op("tQ").small(0).ints({4}).ints({1}).op("\x89}").small(1).small(2).op("stR");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "the pickle ends early"},
      {"\x80\x02N", "the pickle ends early"},                                              // no STOP
      {std::string("\x80\x02X\xf0\xff\xff\xff", 7) + "abc.", "needs 4294967280 more bytes"},  // forged length
      {"\x80\x02h\x07.", "memo entry 7, never stored"},
      {"\x80\x02S'os'\n.", "pickle opcode 0x53"},                                          // text STRING: not torch's
      {std::string("\x80\x02]q\x00h\x00", 7) + "a.", "a value that contains itself"},  // l = []; l.append(l)
      {deep, "nested more than 100 deep"},
      {"\x80\x02s.", "stack does not hold"},
      {"\x80\x02t.", "closes a MARK that was never opened"},
      {std::string("\x80\x02\x8a\x09", 4) + std::string(9, '\x01') + ".", "wider than 64 bits"},
      {"\x80\x06N.", "pickle protocol 6"},
      {Pickle().op("}").op("]").op("Ns.").done(), "a dict key that is a list"},
      {Pickle().tensor("0", 4, 0, {3, 2}, {2, 1}).done(), "reaches past the storage's end"},  // last element 5 of 4
      {Pickle().tensor("0", 4, 4, {1}, {1}).done(), "reaches past the storage's end"},
      {Pickle().tensor("0", 4, 0, {2, 2}, {2}).done(), "more or fewer strides than sizes"},
      {Pickle().tensor("0", 4, 0, {4}, {1}, "UntypedStorage").done(), "the global 'torch.UntypedStorage'"},
      {hooks.done(), "backward hooks"},
      {Pickle().global("numpy", "dtype").text("f8").op("\x89\x88\x87R").small(3).text(">").op("\x86").op("b").done(),
       "big-endian NumPy value"},
      {Pickle().global("torch", "FloatStorage").op(")R.").done(), "only name in storage ids"},
  };
  for (const auto& [bytes, expected] : cases) {
    const std::string message = pickleMessage(bytes);
    EXPECT_NE(message.find(expected), std::string::npos) << "expected \"" << expected << "\", got: " << message;
  }
}

// ---- Damaged, foreign and forged checkpoint files ----

class CheckpointFiles : public ::testing::Test {
 protected:
  test::ScratchDir dir_{"nnunet-checkpoint-files"};

  std::string messageFor(const std::string& name, const std::string& bytes) {
    const fs::path file = dir_ / name;
    writeFile(file, bytes);
    const std::string message = messageOf([&] { readNnunetCheckpoint(file); });
    EXPECT_EQ(message.rfind(file.string() + ": ", 0), 0u) << "the message names the file: " << message;
    return message;
  }
};

TEST_F(CheckpointFiles, TruncatedCopiesAreRefused) {
  const std::string whole = fileBytes(fixturePath(k911Plain));
  ASSERT_GT(whole.size(), 700000u);
  for (const size_t length : {size_t{0}, size_t{3}, size_t{100}, size_t{49000}, whole.size() / 2, whole.size() - 1}) {
    const std::string message = messageFor("truncated.pth", whole.substr(0, length));
    EXPECT_TRUE(message.find("not a zip archive") != std::string::npos || message.find("incomplete") != std::string::npos)
        << length << " bytes: " << message;
  }
}

TEST_F(CheckpointFiles, GarbageAndForeignFilesAreRefused) {
  std::mt19937 random(7);
  std::string garbage(4096, '\0');
  for (auto& c : garbage) c = static_cast<char>(random());
  EXPECT_NE(messageFor("garbage.pth", garbage).find("not a PyTorch checkpoint (not a zip archive)"), std::string::npos);
  EXPECT_NE(messageFor("garbage-after-magic.pth", "PK\x03\x04" + garbage).find("incomplete"), std::string::npos);
  EXPECT_NE(messageFor("text.pth", "{\"not\": \"a checkpoint\"}\n").find("not a zip archive"), std::string::npos);
  EXPECT_NE(messageFor("missing-dir/absent.pth", "").find("no such checkpoint file"), std::string::npos);  // not written

  const std::string noPickle = messageFor("no-pickle.pth", zipOf({{"checkpoint_final/version", "3\n"}}));
  EXPECT_NE(noPickle.find("holds 0 <folder>/data.pkl entries"), std::string::npos) << noPickle;
  const std::string notNnunet = messageFor("plain-dict.pth", zipOf({{"archive/data.pkl", Pickle().op("}").done()}}));
  EXPECT_NE(notNnunet.find("not an nnU-Net v2 checkpoint: it has no network_weights"), std::string::npos) << notNnunet;
  std::string compressed = oneWeightCheckpoint(0, {4}, {1}, {1, 2, 3, 4});
  compressed[8] = 8;                                                // data.pkl's local header: deflate
  compressed[compressed.find(std::string("PK\x01\x02", 4)) + 10] = 8;  // and its directory entry
  EXPECT_NE(messageFor("deflated.pth", compressed).find("is compressed (zip method 8)"), std::string::npos);
}

TEST_F(CheckpointFiles, TensorsOutsideOrShortOfTheirStoragesAreRefused) {
  const std::string past = messageFor("past-storage.pth", oneWeightCheckpoint(0, {5}, {1}, {1, 2, 3, 4}));
  EXPECT_NE(past.find("reaches past the storage's end"), std::string::npos) << past;
  const std::string shortRecord = messageFor("short-record.pth", oneWeightCheckpoint(0, {4}, {1}, {1, 2}));
  EXPECT_NE(shortRecord.find("c/data/0 holds 8 bytes where the pickle declares 4 elements of torch.FloatStorage (16 bytes)"),
            std::string::npos) << shortRecord;
  const std::string missing = messageFor("missing-record.pth", oneWeightCheckpoint(0, {4}, {1}, {}));
  EXPECT_NE(missing.find("storage record c/data/0, which the archive lacks"), std::string::npos) << missing;
  const std::string broadcast = messageFor("broadcast.pth", oneWeightCheckpoint(0, {100, 4}, {0, 1}, {1, 2, 3, 4}));
  EXPECT_NE(broadcast.find("network_weights['w'] has more elements than its storage"), std::string::npos) << broadcast;

  // One flipped bit in a storage of a real checkpoint: its CRC-32 no longer matches.
  std::string flipped = fileBytes(fixturePath(k911Plain));
  flipped[49844 + 100] ^= 0x01;  // inside checkpoint_final/data/0 (which starts at byte 49844)
  const std::string damaged = messageFor("flipped.pth", flipped);
  EXPECT_NE(damaged.find("entry checkpoint_final/data/0 fails its CRC-32 check"), std::string::npos) << damaged;
}

TEST_F(CheckpointFiles, AHandMadeCheckpointReadsBackWithSharedStoragesAndViews) {
  const std::string pickle = checkpointPickle([](Pickle& p) {
    p.text("conv.weight").tensor("0", 6, 0, {2, 3}, {3, 1});
    p.text("alias.weight").tensor("0", 6, 0, {2, 3}, {3, 1});
    p.text("row").tensor("0", 6, 3, {3}, {1});
    p.text("half").tensor("1", 2, 0, {2}, {1}, "HalfStorage");
  });
  const fs::path file = dir_ / "hand-made.pth";
  writeFile(file, zipOf({{"any_name/data.pkl", pickle}, {"any_name/data/0", floatBytes({1, 2, 3, 4, 5, 6})},
                         {"any_name/data/1", std::string("\x00\x3c\x00\x40", 4)}, {"any_name/version", "3\n"}}));
  const NnunetCheckpoint checkpoint = readNnunetCheckpoint(file);
  const auto& weights = checkpoint.networkWeights;
  ASSERT_EQ(weights.size(), 4u);
  EXPECT_EQ(weights[0].key(), "conv.weight");
  EXPECT_TRUE(torch::equal(weights["conv.weight"], torch::tensor({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}).reshape({2, 3})));
  EXPECT_EQ(weights["alias.weight"].data_ptr(), weights["conv.weight"].data_ptr());
  EXPECT_TRUE(torch::equal(weights["row"], torch::tensor({4.f, 5.f, 6.f})));
  EXPECT_EQ(weights["half"].scalar_type(), torch::kFloat);  // float16 1.0, 2.0 widened
  EXPECT_TRUE(torch::equal(weights["half"], torch::tensor({1.f, 2.f})));
  EXPECT_EQ(checkpoint.info.trainerName, "nnUNetTrainer");
  EXPECT_FALSE(checkpoint.info.configuration);  // no init_args
}

}  // namespace
}  // namespace medseg::nnunet
