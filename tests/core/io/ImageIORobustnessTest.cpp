// Bad input never crashes, never allocates what a header merely claims, never returns silently
// partial voxels, and never leaves partial output behind.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <zlib.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <set>

#include "core/io/ImageIO.h"
#include "support/TestSupport.h"
#include "tests/core/io/IoTestImages.h"

namespace medseg {
namespace {
namespace fs = std::filesystem;
using test::ScratchDir;

// Runs `call` and returns the ImageIOError message ("" when nothing was thrown).
template <typename Call>
std::string ioErrorOf(Call&& call) {
  try {
    call();
  } catch (const ImageIOError& e) {
    return e.what();
  }
  return "";
}

template <typename T>
void put(std::string& bytes, size_t offset, T value) {
  std::memcpy(&bytes[offset], &value, sizeof(T));
}

// A valid single-file NIfTI-1 header (348 bytes + 4 extension bytes) with no voxel data after it.
std::string niftiHeader(int16_t nx, int16_t ny, int16_t nz) {
  std::string bytes(352, '\0');
  put<int32_t>(bytes, 0, 348);
  const int16_t dims[8] = {3, nx, ny, nz, 1, 1, 1, 1};
  for (int i = 0; i < 8; ++i) put<int16_t>(bytes, 40 + 2 * i, dims[i]);
  put<int16_t>(bytes, 70, 16);  // DT_FLOAT32
  put<int16_t>(bytes, 72, 32);  // bitpix
  const float pixdim[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  for (int i = 0; i < 8; ++i) put<float>(bytes, 76 + 4 * i, pixdim[i]);
  put<float>(bytes, 108, 352.0f);  // vox_offset
  put<int16_t>(bytes, 252, 1);     // qform_code scanner
  std::memcpy(&bytes[344], "n+1\0", 4);
  return bytes;
}

std::string gzipped(const std::string& raw) {
  uLongf size = compressBound(raw.size()) + 32;
  std::string out(size, '\0');
  z_stream stream{};
  deflateInit2(&stream, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);  // gzip wrapper
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  stream.avail_in = static_cast<uInt>(raw.size());
  stream.next_out = reinterpret_cast<Bytef*>(&out[0]);
  stream.avail_out = static_cast<uInt>(out.size());
  deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

TEST(ImageIORobustness, HugeHeaderIsRefusedQuicklyWithoutAllocating) {
  ScratchDir dir("io-huge");
  const fs::path file = dir / "huge.nii";
  test::writeBytes(file, niftiHeader(30000, 30000, 30000));
  const auto start = std::chrono::steady_clock::now();
  const std::string headerError = ioErrorOf([&] { readImageHeader(file); });
  const std::string readError = ioErrorOf([&] { readImage(file); });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(headerError.find("huge.nii"), std::string::npos) << headerError;
  EXPECT_NE(headerError.find("30000x30000x30000"), std::string::npos) << headerError;
  EXPECT_NE(headerError.find("memory budget"), std::string::npos) << headerError;
  EXPECT_NE(headerError.find("MEDSEG_MAX_IMAGE_BYTES"), std::string::npos) << headerError;
  EXPECT_NE(readError.find("memory budget"), std::string::npos) << readError;
  EXPECT_LT(seconds, 2.0);

  test::writeBytes(dir / "huge.nii.gz", gzipped(niftiHeader(30000, 30000, 30000)));
  EXPECT_NE(ioErrorOf([&] { readImage(dir / "huge.nii.gz"); }).find("memory budget"), std::string::npos);
}

TEST(ImageIORobustness, BudgetComesFromOptionsOrEnvironment) {
  ScratchDir dir("io-budget");
  const fs::path file = dir / "small.nii.gz";
  writeImage(test::rampImage({10, 10, 10}, 1), file);  // 4000 bytes as float32
  ReadOptions tight;
  tight.maxBytes = 3999;
  EXPECT_NE(ioErrorOf([&] { readImage(file, tight); }).find("memory budget"), std::string::npos);
  tight.maxBytes = 4000;
  EXPECT_EQ(readImage(file, tight).data.size(), 1000u);

  ::setenv("MEDSEG_MAX_IMAGE_BYTES", "2K", 1);
  EXPECT_EQ(defaultImageBudgetBytes(), 2048u);
  EXPECT_NE(ioErrorOf([&] { readImageHeader(file); }).find("2.0 KiB memory budget"), std::string::npos);
  ::setenv("MEDSEG_MAX_IMAGE_BYTES", "lots", 1);
  EXPECT_NE(ioErrorOf([&] { readImageHeader(file); }).find("MEDSEG_MAX_IMAGE_BYTES"), std::string::npos);
  ::unsetenv("MEDSEG_MAX_IMAGE_BYTES");
  EXPECT_EQ(defaultImageBudgetBytes(), 8ull << 30);
  EXPECT_EQ(readImageHeader(file).size, (Size3{10, 10, 10}));
}

TEST(ImageIORobustness, TruncatedFilesAreErrorsNotPartialImages) {
  ScratchDir dir("io-truncated");
  const ImageVolume image = test::noiseImage({32, 32, 32});
  for (const char* ext : {".nii.gz", ".nii", ".nrrd", ".mha"}) {
    const fs::path file = dir / (std::string("cut") + ext);
    writeImage(image, file);
    test::truncateFile(file, 0.5);
    const std::string error = ioErrorOf([&] { readImage(file); });
    EXPECT_NE(error.find(file.string()), std::string::npos) << ext << ": " << error;
  }
}

TEST(ImageIORobustness, CorruptGzipPayloadIsDetected) {
  ScratchDir dir("io-corrupt");
  const fs::path file = dir / "flipped.nii.gz";
  writeImage(test::noiseImage({32, 32, 32}), file);
  std::string bytes = test::readBytesForTest(file);
  for (size_t i = bytes.size() / 2; i < bytes.size() / 2 + 16; ++i) bytes[i] = static_cast<char>(~bytes[i]);
  test::writeBytes(file, bytes);
  const std::string error = ioErrorOf([&] { readImage(file); });
  EXPECT_NE(error.find("flipped.nii.gz"), std::string::npos) << error;
}

TEST(ImageIORobustness, WrongMagicAndRandomBytesAreRefused) {
  ScratchDir dir("io-garbage");
  std::string noise(4096, '\0');
  for (size_t i = 0; i < noise.size(); ++i) noise[i] = static_cast<char>((i * 2654435761u) >> 13);
  test::writeBytes(dir / "noise.nii.gz", noise);
  test::writeBytes(dir / "noise.nii", noise);
  test::writeBytes(dir / "noise.nrrd", noise);
  test::writeBytes(dir / "gzip-of-noise.nii.gz", gzipped(noise));
  std::string badMagic = niftiHeader(4, 4, 4) + std::string(256, '\0');
  std::memcpy(&badMagic[344], "xyz\0", 4);
  test::writeBytes(dir / "badmagic.nii", badMagic);
  test::writeBytes(dir / "empty.nii.gz", "");
  for (const char* name : {"noise.nii.gz", "noise.nii", "noise.nrrd", "gzip-of-noise.nii.gz", "badmagic.nii", "empty.nii.gz"}) {
    const std::string error = ioErrorOf([&] { readImage(dir / name); });
    EXPECT_NE(error.find(name), std::string::npos) << name << ": " << error;
    EXPECT_FALSE(ioErrorOf([&] { readImageHeader(dir / name); }).empty()) << name;
  }
}

TEST(ImageIORobustness, MissingFilesAndFoldersWithoutDicom) {
  ScratchDir dir("io-missing");
  EXPECT_NE(ioErrorOf([&] { readImage(dir / "absent.nii.gz"); }).find("no such file"), std::string::npos);
  test::writeBytes(dir / "notes.txt", "not an image");
  const std::string error = ioErrorOf([&] { readImageHeader(dir.path()); });
  EXPECT_NE(error.find("without a DICOM series"), std::string::npos) << error;
  EXPECT_FALSE(ioErrorOf([&] { readImage(dir.path()); }).empty());
}

TEST(ImageIORobustness, LabelsMustBeSmallNonNegativeIntegers) {
  ScratchDir dir("io-badlabels");
  ImageVolume values({4, 4, 4}, 1, test::obliqueGeometry(), 1.0f);
  values.data[5] = 0.5f;
  values.data[9] = 2.5f;
  writeImage(values, dir / "fractional.nii.gz");
  const std::string error = ioErrorOf([&] { readLabels(dir / "fractional.nii.gz"); });
  EXPECT_NE(error.find("2 of 64 voxels"), std::string::npos) << error;
  EXPECT_NE(error.find("0.5"), std::string::npos) << error;

  values.data[5] = 1.0f;
  values.data[9] = -3.0f;
  writeImage(values, dir / "negative.nii.gz");
  EXPECT_NE(ioErrorOf([&] { readLabels(dir / "negative.nii.gz"); }).find("-3"), std::string::npos);
  values.data[9] = 256.0f;
  writeImage(values, dir / "large.nii.gz");
  EXPECT_NE(ioErrorOf([&] { readLabels(dir / "large.nii.gz"); }).find("256"), std::string::npos);
  values.data[9] = std::nanf("");  // NRRD keeps NaN (nifti1_io silently turns NaN into 0 on reading)
  writeImage(values, dir / "nan.nrrd");
  const std::string nanError = ioErrorOf([&] { readLabels(dir / "nan.nrrd"); });
  EXPECT_NE(nanError.find("NaN"), std::string::npos) << nanError;
  writeImage(test::rampImage({3, 3, 3}, 2), dir / "two-channels.nii.gz");
  EXPECT_NE(ioErrorOf([&] { readLabels(dir / "two-channels.nii.gz"); }).find("one channel"), std::string::npos);
}

TEST(ImageIORobustness, UnknownExtensionIsRefusedBeforeWriting) {
  ScratchDir dir("io-badext");
  for (const char* name : {"out.png", "out.txt", "out", "out.gz"}) {
    const std::string error = ioErrorOf([&] { writeImage(test::rampImage({3, 3, 3}, 1), dir / name); });
    EXPECT_NE(error.find("unknown image extension"), std::string::npos) << name << ": " << error;
  }
  EXPECT_TRUE(test::folderContents(dir.path()).empty());
}

TEST(ImageIORobustness, FailedDetachedWriteLeavesNoTemporaryFiles) {
  ScratchDir dir("io-failwrite");
  fs::create_directories(dir / "scan.raw" / "occupied");  // the data file cannot be moved into place
  EXPECT_FALSE(ioErrorOf([&] { writeImage(test::rampImage({3, 3, 3}, 1), dir / "scan.mhd"); }).empty());
  EXPECT_EQ(test::folderContents(dir.path()), (std::set<std::string>{"scan.raw"}));
}

// Child process body: exits 0 when the write failed with an ImageIOError, as it must.
void writeWithFileSizeLimit(const fs::path& target) {
  std::signal(SIGXFSZ, SIG_IGN);
  const rlimit limit{16384, 16384};
  ::setrlimit(RLIMIT_FSIZE, &limit);
  const std::string error = ioErrorOf([&] { writeImage(test::noiseImage({64, 64, 64}), target); });
  std::exit(error.empty() ? 2 : 0);
}

// A write that fails half-way (disk full) must neither replace the old file nor leave a temporary
// one. RLIMIT_FSIZE simulates a full disk even for root; it runs in a child process.
TEST(ImageIORobustness, WriteFailingMidwayKeepsOldFileAndLeavesNoTemporary) {
  ScratchDir dir("io-diskfull");
  for (const char* ext : {".nii.gz", ".nii", ".nrrd", ".mha"}) {
    const fs::path target = dir / (std::string("big") + ext);
    writeImage(test::rampImage({2, 2, 2}, 1), target);
    EXPECT_EXIT(writeWithFileSizeLimit(target), ::testing::ExitedWithCode(0), "") << ext;
    EXPECT_EQ(test::folderContents(dir.path()).count(target.filename().string()), 1u);
    EXPECT_EQ(readImage(target).size, (Size3{2, 2, 2})) << ext;  // the old file is intact
    for (const auto& name : test::folderContents(dir.path())) EXPECT_EQ(name.find(".tmp-"), std::string::npos) << name;
  }
}

}  // namespace
}  // namespace medseg
