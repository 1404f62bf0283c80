// Results returned by a remote run are untrusted until checked: inside the run folder (no "..", no
// absolute path, no symbolic link anywhere on the way), a regular file within a size bound, and of the
// kind the reader expects (a PyTorch archive for models, a single-file NIfTI with a sane header for
// images) before any parser opens it. `medseg runs show` reports a refused model instead of naming it.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstring>
#include <fstream>

#include "cluster/submit/ResultFiles.h"
#include "cluster/submit/RunDirectory.h"
#include "core/io/ImageIO.h"
#include "core/util/AtomicFile.h"
#include "core/util/Interrupt.h"
#include "support/TestSupport.h"

namespace medseg::cluster {
namespace {
namespace fs = std::filesystem;

void expectRefused(const fs::path& run, const fs::path& relative, ResultKind kind, const std::string& phrase,
                   uintmax_t maxBytes = 1u << 20) {
  try {
    resolveResultFile(run, relative, kind, maxBytes);
    ADD_FAILURE() << relative << " was accepted";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find(phrase), std::string::npos) << relative << ": " << error.what();
  }
}

struct RunFolder {
  test::ScratchDir scratch{"result-files"};
  fs::path run = scratch / "run";
  RunFolder() {
    fs::create_directories(run / "masks");
    LabelVolume mask({4, 4, 3}, 1);
    mask.at(1, 1, 1) = 2;
    writeLabels(mask, run / "masks" / "case.nii.gz");
    writeLabels(mask, run / "masks" / "case.nrrd");
    writeFileAtomically(run / "best.pt", std::string("PK\x03\x04", 4) + "rest of a zip archive");
    writeFileAtomically(scratch / "outside.nii.gz", readTextFile(run / "masks" / "case.nii.gz"));
  }
};

TEST(ResultFiles, ModelsMustBeArchivesInsideTheRunFolder) {
  RunFolder f;
  EXPECT_EQ(resolveResultFile(f.run, "best.pt", ResultKind::Checkpoint, 1u << 20), fs::canonical(f.run / "best.pt"));
  writeFileAtomically(f.run / "text.pt", "a text file named like a model");
  expectRefused(f.run, "text.pt", ResultKind::Checkpoint, "not a model file");
  writeFileAtomically(f.run / "short.pt", "PK");
  expectRefused(f.run, "short.pt", ResultKind::Checkpoint, "not a model file");
  fs::create_symlink(f.run / "best.pt", f.run / "link.pt");  // even a link to a file inside
  expectRefused(f.run, "link.pt", ResultKind::Checkpoint, "symbolic link");
  expectRefused(f.run, "best.pt", ResultKind::Checkpoint, "bytes, more than", 8);
}

TEST(ResultFiles, ImagesMustBeSingleFileNiftiWithASaneHeader) {
  RunFolder f;
  EXPECT_NO_THROW(resolveResultFile(f.run, "masks/case.nii.gz", ResultKind::Image, 1u << 20));
  EXPECT_NO_THROW(resolveResultFile(f.run, "./masks/case.nii.gz", ResultKind::Image, 1u << 20));
  // Formats whose header may name a data file elsewhere are refused before ITK reads them.
  expectRefused(f.run, "masks/case.nrrd", ResultKind::Image, "not a NIfTI image");
  writeFileAtomically(f.run / "masks" / "metrics.json", R"({"dice": 1})");
  expectRefused(f.run, "masks/metrics.json", ResultKind::Image, "not a NIfTI image");
  writeFileAtomically(f.run / "masks" / "fake.nii.gz", R"({"not": "an image"})");
  expectRefused(f.run, "masks/fake.nii.gz", ResultKind::Image, "not a usable image");
  // A header declaring 2^40 voxels is refused from the header alone.
  {
    std::string nifti(352, '\0');
    const int32_t size = 348;
    std::memcpy(&nifti[0], &size, 4);
    const int16_t dims[8] = {3, 16384, 16384, 4096, 1, 1, 1, 1};
    std::memcpy(&nifti[40], dims, sizeof dims);
    const int16_t datatype = 16, bitpix = 32;
    std::memcpy(&nifti[70], &datatype, 2);
    std::memcpy(&nifti[72], &bitpix, 2);
    const float pixdim[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    std::memcpy(&nifti[76], pixdim, sizeof pixdim);
    const float offset = 352;
    std::memcpy(&nifti[108], &offset, 4);
    std::memcpy(&nifti[344], "n+1\0", 4);
    writeFileAtomically(f.run / "masks" / "huge.nii", nifti);
  }
  expectRefused(f.run, "masks/huge.nii", ResultKind::Image, "memory budget");
  fs::create_directories(f.run / "masks" / "folder.nii.gz");
  expectRefused(f.run, "masks/folder.nii.gz", ResultKind::Image, "not a regular file");
}

TEST(ResultFiles, EscapesLinksDevicesAndOversizedFilesAreRefused) {
  RunFolder f;
  fs::create_symlink(f.scratch / "outside.nii.gz", f.run / "masks" / "escape.nii.gz");
  expectRefused(f.run, "masks/escape.nii.gz", ResultKind::Image, "symbolic link");
  fs::create_directory_symlink(f.scratch.path(), f.run / "up");
  expectRefused(f.run, "up/outside.nii.gz", ResultKind::Image, "symbolic link");
  expectRefused(f.run, "../outside.nii.gz", ResultKind::Image, "climbs out");
  expectRefused(f.run, "masks/../../outside.nii.gz", ResultKind::Image, "climbs out");
  expectRefused(f.run, (f.scratch / "outside.nii.gz").string(), ResultKind::Image, "absolute");
  fs::create_symlink("/dev/zero", f.run / "zero.pt");
  expectRefused(f.run, "zero.pt", ResultKind::Checkpoint, "symbolic link");
  ASSERT_EQ(::mkfifo((f.run / "fifo.pt").c_str(), 0600), 0);
  expectRefused(f.run, "fifo.pt", ResultKind::Checkpoint, "not a regular file");
  std::ofstream(f.run / "big.pt", std::ios::binary) << std::string("PK\x03\x04", 4) << std::string(4096, 'x');
  expectRefused(f.run, "big.pt", ResultKind::Checkpoint, "refusing to read it", 1024);
  // A run folder reached through a link of its own is fine: the check is about what lies inside it.
  fs::create_directory_symlink(f.run, f.scratch / "run-link");
  EXPECT_NO_THROW(resolveResultFile(f.scratch / "run-link", "masks/case.nii.gz", ResultKind::Image, 1u << 20));
}

TEST(ResultFiles, RunsShowRefusesAModelThatLeavesTheRunFolder) {
  test::ScratchDir scratch("runs-show-models");
  writeFileAtomically(scratch / "train.yaml", "epochs: 1\n");
  RunSpec spec;
  spec.name = "remote";
  spec.configPath = (scratch / "train.yaml").string();
  auto run = RunDirectory::create(scratch / "runs", spec, "local");
  run.advance(RunState::Running);
  run.advance(RunState::Finished);
  writeFileAtomically(scratch / "elsewhere.pt", std::string("PK\x03\x04", 4));
  fs::create_symlink(scratch / "elsewhere.pt", run.path() / "best.pt");
  writeFileAtomically(run.path() / "checkpoint.pt", std::string("PK\x03\x04", 4) + "archive");
  const auto shown = test::runMedseg({"--json", "runs", "--run-dir", (scratch / "runs").string(), "show", "remote"});
  ASSERT_EQ(shown.exitCode, 0) << shown.output;
  const auto line = shown.output.substr(shown.output.find("{\"event\":\"result\""));
  const auto result = nlohmann::json::parse(line.substr(0, line.find('\n')));
  ASSERT_TRUE(result.contains("models")) << result.dump(2);
  EXPECT_EQ(result["models"]["checkpoint.pt"], fs::canonical(run.path() / "checkpoint.pt").string());
  ASSERT_TRUE(result["models"]["best.pt"].is_object()) << result.dump(2);
  EXPECT_NE(result["models"]["best.pt"]["error"].get<std::string>().find("symbolic link"), std::string::npos);
}

}  // namespace
}  // namespace medseg::cluster
