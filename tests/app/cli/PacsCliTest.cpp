// `medseg pacs` and `medseg infer --input pacs://` against a real PACS: Debian's Orthanc, started by
// the test on free localhost ports with its own config and storage (support/OrthancServer.h). The
// suite uploads a generated 4-modality study (FLAIR JPEG lossless, T1w JPEG-LS, T1gd JPEG 2000, T2w
// RLE; built with writeDicomSeries + dcmodify + dcmcjpeg/dcmcjpls/gdcmconv, sent with DCMTK's
// storescu; support/PacsTestStudy.h) and a one-series study with a slice taken out (deflate), then
// checks:
//   - pacs find lists the study and its four series; pacs get retrieves each slice as stored;
//   - infer --input pacs://.../STUDY with a tiny model gives the mask of infer on the same series
//     exported to NIfTI, --format seg writes a DICOM SEG that pacs store sends back, Orthanc's REST
//     API shows it as a SEG referencing the FLAIR series, and reading it back gives the same labels
//     and geometry;
//   - an unreachable server (exit 4), a wrong called AE title (exit 3), a retrieve cut off
//     mid-series (exit 4, no folder, no mask) and a series with a missing slice (exit 3, no mask)
//     end with clear messages.
// Skipped, saying so, only when the orthanc binary is not installed.
#include <gtest/gtest.h>

#include <set>

#include <nlohmann/json.hpp>

#include "core/io/DicomSeg.h"
#include "core/io/ImageIO.h"
#include "support/CuttingProxy.h"
#include "support/PacsTestStudy.h"
#include "support/SharedSuite.h"
#include "support/MissingComponent.h"

namespace medseg {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using test::kPacsSeries;
using test::resultEvent;
using test::seriesUidOf;

// One Orthanc, one tiny model and the uploaded studies for the whole suite.
struct PacsCliShared {
  std::unique_ptr<test::ScratchDir> dir;
  std::unique_ptr<test::OrthancServer> orthanc;
  test::PacsTestStudy study;
  std::string gapStudyUid;
  std::string skip;
};
test::SharedSuite<PacsCliShared> pacsCliSuite;

class PacsCli : public ::testing::Test {
 protected:
  static void prepare() {
    pacsCliSuite->skip = test::pacsTestsSkipReason(/*dicomWeb=*/false);
    if (!pacsCliSuite->skip.empty()) return;
    pacsCliSuite->dir = std::make_unique<test::ScratchDir>("pacs-cli");
    const fs::path root = pacsCliSuite->dir->path();
    test::makePacsTestStudy(root, pacsCliSuite->study);
    if (::testing::Test::HasFatalFailure()) return;
    // A second study whose only series lacks its middle slice.
    pacsCliSuite->gapStudyUid = test::randomUid();
    ImageVolume flair = extractChannel(pacsCliSuite->study.image, 0);
    for (float& v : flair.data) v *= 1000.0f;
    const fs::path gap = root / "upload" / "gap";
    test::writeStudySeries(flair, gap, pacsCliSuite->gapStudyUid, "PACS002", "AX FLAIR", 1, test::TransferSyntax::Deflate);
    const auto gapFiles = test::filesIn(gap);
    fs::remove(gapFiles[gapFiles.size() / 2]);

    pacsCliSuite->orthanc = std::make_unique<test::OrthancServer>(root / "orthanc");
    test::uploadPacsTestStudy(*pacsCliSuite->orthanc, pacsCliSuite->study);
    if (::testing::Test::HasFatalFailure()) return;
    test::uploadSeries(*pacsCliSuite->orthanc, gap, test::TransferSyntax::Deflate);
  }
  static void TearDownTestSuite() { pacsCliSuite.reset(); }
  void SetUp() override {
    const bool ready = pacsCliSuite.prepareOnce(prepare);  // in the first test (tests/support/SharedSuite.h)
    if (!pacsCliSuite->skip.empty()) MEDSEG_MISSING_COMPONENT(pacsCliSuite->skip);
    ASSERT_TRUE(ready && pacsCliSuite->orthanc) << pacsCliSuite.failure();
  }
  std::string pacsUri(const std::string& uid) const { return "pacs://" + pacsCliSuite->orthanc->server() + "/" + uid; }
};

TEST_F(PacsCli, FindListsTheStudyAndItsFourSeries) {
  const auto find = test::runMedseg({"--json", "pacs", "find", "--server", pacsCliSuite->orthanc->server(), "--patient", "PACS001"});
  ASSERT_EQ(find.exitCode, 0) << find.output;
  const json result = resultEvent(find.output);
  ASSERT_EQ(result["studies"].size(), 1u) << find.output;
  const json& study = result["studies"][0];
  EXPECT_EQ(study["study_uid"], pacsCliSuite->study.studyUid);
  EXPECT_EQ(study["patient_id"], "PACS001");
  ASSERT_EQ(study["series"].size(), 4u);
  std::set<std::string> descriptions;
  for (const auto& s : study["series"]) {
    descriptions.insert(s["description"].get<std::string>());
    EXPECT_EQ(s["modality"], "MR");
    EXPECT_EQ(s["instances"], 32);
  }
  EXPECT_EQ(descriptions, (std::set<std::string>{"AX FLAIR", "AX T1", "AX T1 post Gd", "AX T2"}));

  const auto human = test::runMedseg({"pacs", "find", "--server", pacsCliSuite->orthanc->server(), "--modality", "MR"});
  ASSERT_EQ(human.exitCode, 0) << human.output;
  EXPECT_NE(human.output.find("study " + pacsCliSuite->study.studyUid), std::string::npos) << human.output;
  EXPECT_NE(human.output.find("AX T1 post Gd"), std::string::npos) << human.output;
  const auto echo = test::runMedseg({"pacs", "echo", "--server", pacsCliSuite->orthanc->server()});
  EXPECT_EQ(echo.exitCode, 0) << echo.output;
}

TEST_F(PacsCli, GetRetrievesEverySliceAsStoredAndReadsLikeTheUpload) {
  for (int c = 0; c < 4; ++c) {
    const fs::path out = pacsCliSuite->dir->path() / ("get-" + std::string(kPacsSeries[c].modality));
    const std::string uid = seriesUidOf(pacsCliSuite->study.seriesFolders[size_t(c)]);
    const auto get = test::runMedseg({"--json", "pacs", "get", "--server", pacsCliSuite->orthanc->server(), "--series", uid,
                                      "--out", out.string()});
    ASSERT_EQ(get.exitCode, 0) << get.output;
    EXPECT_EQ(resultEvent(get.output)["instances"], 32);
    bool progressed = false;
    for (const auto& e : test::jsonLines(get.output)) progressed = progressed || e.value("event", "") == "progress";
    EXPECT_TRUE(progressed) << get.output;
    ASSERT_EQ(test::filesIn(out).size(), 32u);
    EXPECT_EQ(test::fileTransferSyntax(test::filesIn(out).front()), test::transferSyntaxUid(kPacsSeries[c].syntax))
        << kPacsSeries[c].modality;
    const ImageVolume retrieved = readImage(out), uploaded = readImage(pacsCliSuite->study.seriesFolders[size_t(c)]);
    EXPECT_EQ(retrieved.data, uploaded.data) << kPacsSeries[c].modality;
    EXPECT_TRUE(retrieved.geometry.sameAs(uploaded.geometry)) << kPacsSeries[c].modality;
  }
}

TEST_F(PacsCli, InferFromPacsEqualsInferOnTheNiftiExportAndItsSegGoesBack) {
  const fs::path root = pacsCliSuite->dir->path() / "infer";
  fs::create_directories(root);
  // Reference: the four series retrieved, read, stacked and written as one NIfTI, segmented as a file.
  std::vector<ImageVolume> channels;
  std::string flairUid;
  for (int c = 0; c < 4; ++c) {
    const std::string uid = seriesUidOf(pacsCliSuite->study.seriesFolders[size_t(c)]);
    if (c == 0) flairUid = uid;
    const fs::path out = root / ("series-" + std::to_string(c));
    ASSERT_EQ(test::runMedseg({"pacs", "get", "--server", pacsCliSuite->orthanc->server(), "--series", uid, "--out", out.string()})
                  .exitCode,
              0);
    channels.push_back(readImage(out));
  }
  writeImage(stackChannels(channels), root / "export.nii.gz");
  const auto local = test::runMedseg({"infer", "--model", pacsCliSuite->study.model.string(), "--input", (root / "export.nii.gz").string(),
                                      "--out", (root / "local.nii.gz").string()});
  ASSERT_EQ(local.exitCode, 0) << local.output;

  const auto pacs = test::runMedseg({"--json", "infer", "--model", pacsCliSuite->study.model.string(), "--input", pacsUri(pacsCliSuite->study.studyUid),
                                     "--out", (root / "pacs.nii.gz").string()});
  ASSERT_EQ(pacs.exitCode, 0) << pacs.output;
  const LabelVolume expected = readLabels(root / "local.nii.gz"), fromPacs = readLabels(root / "pacs.nii.gz");
  EXPECT_EQ(fromPacs.data, expected.data);
  EXPECT_TRUE(fromPacs.geometry.sameAs(expected.geometry));
  int64_t labelled = 0;
  for (uint8_t v : expected.data) labelled += v != 0;
  EXPECT_GT(labelled, 0) << "the tiny model labels nothing; the comparison would be empty";

  // The same as a DICOM SEG, stored back.
  const fs::path seg = root / "pacs-seg.dcm";
  const auto segInfer = test::runMedseg({"infer", "--model", pacsCliSuite->study.model.string(), "--input", pacsUri(pacsCliSuite->study.studyUid),
                                         "--format", "seg", "--out", seg.string()});
  ASSERT_EQ(segInfer.exitCode, 0) << segInfer.output;
  ASSERT_TRUE(isDicomSegFile(seg));
  const DicomSegImage read = readDicomSeg(seg);
  EXPECT_EQ(read.labels.data, expected.data);
  EXPECT_EQ(read.labels.size, channels.front().size);
  EXPECT_TRUE(read.labels.geometry.sameAs(channels.front().geometry, 1e-4));
  EXPECT_EQ(read.referencedSeriesUid, flairUid);
  ASSERT_EQ(read.segments.size(), 3u);
  EXPECT_EQ(read.segments[0].typeCode, "79654002");  // edema
  EXPECT_EQ(read.segments[2].typeCode, "108369006");  // enhancing tumour (neoplasm)

  const auto store = test::runMedseg({"--json", "pacs", "store", "--server", pacsCliSuite->orthanc->server(), seg.string()});
  ASSERT_EQ(store.exitCode, 0) << store.output;
  const std::string segUid = resultEvent(store.output)["stored"][0]["sop_instance_uid"];
  // Orthanc's REST API: the study now holds a SEG instance that references the FLAIR series.
  const json lookup = json::parse(pacsCliSuite->orthanc->post("/tools/lookup", segUid));
  ASSERT_EQ(lookup.size(), 1u) << lookup.dump();
  const std::string instanceId = lookup[0]["ID"];
  const json tags = json::parse(pacsCliSuite->orthanc->get("/instances/" + instanceId + "/simplified-tags"));
  EXPECT_EQ(tags["Modality"], "SEG");
  EXPECT_EQ(tags["SOPClassUID"], "1.2.840.10008.5.1.4.1.1.66.4");
  EXPECT_EQ(tags["StudyInstanceUID"], pacsCliSuite->study.studyUid);
  ASSERT_TRUE(tags.contains("ReferencedSeriesSequence")) << tags.dump();
  EXPECT_EQ(tags["ReferencedSeriesSequence"][0]["SeriesInstanceUID"], flairUid);

  // evaluate reads the SEG as a label map: identical to the NIfTI mask.
  const auto evaluate = test::runMedseg({"--json", "evaluate", "--pred", (root / "local.nii.gz").string(), "--ref", seg.string()});
  ASSERT_EQ(evaluate.exitCode, 0) << evaluate.output;
  EXPECT_NE(evaluate.output.find("\"dice\""), std::string::npos) << evaluate.output;
}

TEST_F(PacsCli, UnreachableServerAndWrongAeTitleEndWithClearErrors) {
  const std::string down = "ORTHANCTEST@127.0.0.1:" + std::to_string(test::freeLoopbackPort());
  const auto unreachable = test::runMedseg({"pacs", "find", "--server", down});
  EXPECT_EQ(unreachable.exitCode, 4) << unreachable.output;
  EXPECT_NE(unreachable.output.find("cannot reach " + down), std::string::npos) << unreachable.output;

  const std::string wrong = "NOTORTHANC@127.0.0.1:" + std::to_string(pacsCliSuite->orthanc->dicomPort());
  const auto rejected = test::runMedseg({"pacs", "find", "--server", wrong});
  EXPECT_EQ(rejected.exitCode, 3) << rejected.output;
  EXPECT_NE(rejected.output.find("rejected the association"), std::string::npos) << rejected.output;
  EXPECT_NE(rejected.output.find("'NOTORTHANC'"), std::string::npos) << rejected.output;

  const fs::path mask = pacsCliSuite->dir->path() / "wrong-ae.nii.gz";
  const auto infer = test::runMedseg({"infer", "--model", pacsCliSuite->study.model.string(), "--input",
                                      "pacs://" + wrong + "/" + pacsCliSuite->study.studyUid, "--out", mask.string()});
  EXPECT_EQ(infer.exitCode, 3) << infer.output;
  EXPECT_FALSE(fs::exists(mask));
  const auto malformed = test::runMedseg({"pacs", "find", "--server", "orthanc-without-port"});
  EXPECT_EQ(malformed.exitCode, 3) << malformed.output;
  EXPECT_NE(malformed.output.find("AET@host:port"), std::string::npos) << malformed.output;
}

TEST_F(PacsCli, RetrieveCutOffMidSeriesLeavesNoFolderAndNoMask) {
  // The relay passes the association and about half of the FLAIR series' bytes back, then drops.
  int64_t seriesBytes = 0;
  for (const auto& f : test::filesIn(pacsCliSuite->study.seriesFolders.front())) seriesBytes += int64_t(fs::file_size(f));
  test::CuttingProxy proxy(pacsCliSuite->orthanc->dicomPort(), seriesBytes / 2);
  const std::string server = pacsCliSuite->orthanc->aeTitle() + "@127.0.0.1:" + std::to_string(proxy.port());
  // C-FIND answers are small; the cut comes during the C-GET. A config with a short DIMSE timeout.
  const fs::path config = pacsCliSuite->dir->path() / "pacs-short.json";
  writeFileAtomically(config, R"({"ae_title": "MEDSEG", "connect_timeout_seconds": 5, "dimse_timeout_seconds": 10})");
  const fs::path out = pacsCliSuite->dir->path() / "cut";
  const auto get = test::runMedseg({"pacs", "get", "--server", server, "--pacs-config", config.string(), "--series",
                                    seriesUidOf(pacsCliSuite->study.seriesFolders.front()), "--out", out.string()});
  EXPECT_EQ(get.exitCode, 4) << get.output;
  EXPECT_NE(get.output.find("was cut off after"), std::string::npos) << get.output;
  EXPECT_NE(get.output.find("of 32 instances"), std::string::npos) << get.output;
  EXPECT_FALSE(fs::exists(out));
  for (const auto& e : fs::directory_iterator(pacsCliSuite->dir->path()))
    EXPECT_EQ(e.path().filename().string().find(".cut"), std::string::npos) << "staging left behind: " << e.path();
  EXPECT_GE(proxy.cutConnections(), 1);

  const fs::path mask = pacsCliSuite->dir->path() / "cut-mask.nii.gz";
  const auto infer = test::runMedseg({"infer", "--model", pacsCliSuite->study.model.string(), "--input",
                                      "pacs://" + server + "/" + pacsCliSuite->study.studyUid, "--pacs-config", config.string(),
                                      "--out", mask.string()});
  EXPECT_EQ(infer.exitCode, 4) << infer.output;
  EXPECT_NE(infer.output.find("was cut off"), std::string::npos) << infer.output;
  EXPECT_FALSE(fs::exists(mask));
}

TEST_F(PacsCli, SeriesWithAMissingSliceIsNamedAndNoMaskIsWritten) {
  const auto find = test::runMedseg({"--json", "pacs", "find", "--server", pacsCliSuite->orthanc->server(), "--patient", "PACS002"});
  ASSERT_EQ(find.exitCode, 0) << find.output;
  const json study = resultEvent(find.output)["studies"][0];
  EXPECT_EQ(study["series"][0]["instances"], 31);
  const std::string uid = study["series"][0]["series_uid"];
  const fs::path mask = pacsCliSuite->dir->path() / "gap-mask.nii.gz";
  // The model takes four channels: the one series is given for each, so the gap is what fails.
  const auto infer = test::runMedseg({"infer", "--model", pacsCliSuite->study.model.string(), "--input",
                                      "pacs://" + pacsCliSuite->orthanc->server(), "--series", uid, "--series", uid,
                                      "--series", uid, "--series", uid, "--out", mask.string()});
  EXPECT_EQ(infer.exitCode, 3) << infer.output;
  EXPECT_NE(infer.output.find("missing slice between"), std::string::npos) << infer.output;
  EXPECT_NE(infer.output.find("about 1 slice(s) missing of 32"), std::string::npos) << infer.output;
  EXPECT_FALSE(fs::exists(mask));
  const fs::path out = pacsCliSuite->dir->path() / "gap-series";
  ASSERT_EQ(test::runMedseg({"pacs", "get", "--server", pacsCliSuite->orthanc->server(), "--series", uid, "--out", out.string()}).exitCode, 0);
  EXPECT_EQ(test::fileTransferSyntax(test::filesIn(out).front()), test::transferSyntaxUid(test::TransferSyntax::Deflate));
  const auto local = test::runMedseg({"infer", "--model", pacsCliSuite->study.model.string(), "--input", out.string(), "--out", mask.string()});
  EXPECT_EQ(local.exitCode, 3) << local.output;
  EXPECT_NE(local.output.find("missing slice between"), std::string::npos) << local.output;
  EXPECT_FALSE(fs::exists(mask));
}

}  // namespace
}  // namespace medseg
