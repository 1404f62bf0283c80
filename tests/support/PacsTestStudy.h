#pragma once
// The study the PACS tests (PacsCliTest, PacsDicomWebCliTest) put on their Orthanc, and the tiny
// model that segments it: three synthetic 32^3 cases, a model trained on them with
// resources/configs/tiny-test.yaml, and one case's four channels written as the four series of one
// study (FLAIR JPEG lossless, T1w JPEG-LS, T1gd JPEG 2000, T2w RLE; built with writeStudySeries),
// uploaded with DCMTK's storescu in their own transfer syntaxes.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/io/ImageIO.h"
#include "support/DicomTools.h"
#include "support/OrthancServer.h"
#include "support/TestSupport.h"

namespace medseg::test {

struct PacsSeriesSpec {
  const char* modality;
  const char* description;
  TransferSyntax syntax;
};
inline const PacsSeriesSpec kPacsSeries[4] = {{"FLAIR", "AX FLAIR", TransferSyntax::JpegLossless},
                                              {"T1w", "AX T1", TransferSyntax::JpegLs},
                                              {"T1gd", "AX T1 post Gd", TransferSyntax::Jpeg2000},
                                              {"T2w", "AX T2", TransferSyntax::Rle}};

inline std::string randomUid() {
  std::mt19937_64 generator{std::random_device{}()};
  return "2.25." + std::to_string(generator() >> 1);
}

// The Series Instance UID of a folder's first file.
inline std::string seriesUidOf(const std::filesystem::path& folder) {
  const auto r = runProgram({"dcmdump", "-s", "+P", "0020,000e", filesIn(folder).front().string()});
  const auto open = r.output.find('['), close = r.output.find(']');
  return r.output.substr(open + 1, close - open - 1);
}

// Why the PACS tests cannot run here ("" when they can): Orthanc, the DICOM tools and, for
// DICOMweb, Orthanc's plugin.
inline std::string pacsTestsSkipReason(bool dicomWeb) {
  if (!orthancAvailable()) return "Orthanc is not on PATH (Debian package orthanc)";
  if (const std::string missing = missingDicomTools(); !missing.empty())
    return "DICOM tools missing: " + missing + " (Debian packages dcmtk, libgdcm-tools)";
  if (dicomWeb && orthancDicomWebPlugin().empty())
    return "Orthanc's DICOMweb plugin is not installed (Debian package orthanc-dicomweb)";
  return {};
}

struct PacsTestStudy {
  std::filesystem::path model;                   // best.pt of the tiny model
  ImageVolume image;                             // the case the study was made from (4 channels)
  std::string studyUid;
  std::vector<std::filesystem::path> seriesFolders;  // as uploaded, FLAIR .. T2w
};

// Trains the model and writes the study's series under `root` (root/data, root/run, root/upload).
// Failures are gtest failures (check ::testing::Test::HasFailure()).
inline void makePacsTestStudy(const std::filesystem::path& root, PacsTestStudy& study) {
  namespace fs = std::filesystem;
  const auto synth = runMedseg({"dataset", "synth", "--out", (root / "data").string(), "--cases", "3", "--seed", "1",
                                "--size", "32"});
  ASSERT_EQ(synth.exitCode, 0) << synth.output;
  const auto train = runMedseg({"--json", "train", "--config", std::string(MEDSEG_SOURCE_DIR) + "/resources/configs/tiny-test.yaml",
                                "--data", (root / "data").string(), "--out", (root / "run").string()});
  ASSERT_EQ(train.exitCode, 0) << train.output;
  study.model = resultEvent(train.output)["best_checkpoint"].get<std::string>();

  // One synthetic case, each channel a series (scaled so int16 keeps its detail).
  fs::path caseImage;
  for (const auto& e : fs::directory_iterator(root / "data" / "imagesTr")) caseImage = e.path();
  study.image = readImage(caseImage);
  ASSERT_EQ(study.image.channels, 4);
  study.studyUid = randomUid();
  for (int c = 0; c < 4; ++c) {
    ImageVolume channel = extractChannel(study.image, c);
    for (float& v : channel.data) v *= 1000.0f;
    const fs::path folder = root / "upload" / kPacsSeries[c].modality;
    writeStudySeries(channel, folder, study.studyUid, "PACS001", kPacsSeries[c].description, c + 1, kPacsSeries[c].syntax);
    ASSERT_EQ(fileTransferSyntax(filesIn(folder).front()), transferSyntaxUid(kPacsSeries[c].syntax));
    study.seriesFolders.push_back(folder);
  }
}

// Sends a folder's files to Orthanc with storescu, proposing the syntax they are stored in.
inline void uploadSeries(const OrthancServer& orthanc, const std::filesystem::path& folder, TransferSyntax syntax) {
  std::vector<std::string> store{"storescu", "-R", storescuProposal(syntax), "-aet", "UPLOADER", "-aec", orthanc.aeTitle(),
                                 "127.0.0.1", std::to_string(orthanc.dicomPort())};
  for (const auto& f : filesIn(folder)) store.push_back(f.string());
  const auto stored = runProgram(store);
  ASSERT_EQ(stored.exitCode, 0) << folder << ": " << stored.output;
}

inline void uploadPacsTestStudy(const OrthancServer& orthanc, const PacsTestStudy& study) {
  for (int c = 0; c < 4; ++c) {
    uploadSeries(orthanc, study.seriesFolders[size_t(c)], kPacsSeries[c].syntax);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace medseg::test
