// `medseg pacs find|get|store --server http://...` and `medseg infer --input dicomweb://...` against
// a real DICOMweb server: Debian's Orthanc with its DICOMweb plugin (orthanc-dicomweb), started on
// free localhost ports (support/OrthancServer.h, OrthancOptions::dicomWeb). The suite uploads the
// 4-series study of support/PacsTestStudy.h over DICOM (storescu) and checks that DICOMweb gives
// what DICOM networking gives:
//   - QIDO-RS: pacs find lists the same studies and series as C-FIND (the same JSON);
//   - WADO-RS: pacs get writes each series' 32 files as stored, and they read to the C-GET copy's
//     volume and geometry, with progress events;
//   - infer --input dicomweb://.../STUDY gives the mask of infer --input pacs://.../STUDY; its DICOM
//     SEG sent with pacs store over STOW-RS appears in Orthanc's REST API referencing the FLAIR
//     series; a TorchScript export whose model.pt.json carries series_patterns is matched by them;
//   - a refused connection (exit 4), an unknown series and a wrong DICOMweb root answered with
//     HTTP 404 (exit 3), and a WADO-RS transfer cut off mid-series (exit 4) end with clear errors,
//     no folder and no mask.
// Skipped, saying so, only when Orthanc, its DICOMweb plugin or the DICOM tools are not installed.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/io/DicomSeg.h"
#include "core/io/ImageIO.h"
#include "core/util/AtomicFile.h"
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

struct DicomWebShared {
  std::unique_ptr<test::ScratchDir> dir;
  std::unique_ptr<test::OrthancServer> orthanc;
  test::PacsTestStudy study;
  std::string skip;
};
test::SharedSuite<DicomWebShared> dicomWebSuite;

class PacsDicomWebCli : public ::testing::Test {
 protected:
  static void prepare() {
    dicomWebSuite->skip = test::pacsTestsSkipReason(/*dicomWeb=*/true);
    if (!dicomWebSuite->skip.empty()) return;
    dicomWebSuite->dir = std::make_unique<test::ScratchDir>("pacs-dicomweb-cli");
    const fs::path root = dicomWebSuite->dir->path();
    test::makePacsTestStudy(root, dicomWebSuite->study);
    if (::testing::Test::HasFatalFailure()) return;
    test::OrthancOptions options;
    options.dicomWeb = true;
    dicomWebSuite->orthanc = std::make_unique<test::OrthancServer>(root / "orthanc", options);
    test::uploadPacsTestStudy(*dicomWebSuite->orthanc, dicomWebSuite->study);
  }
  static void TearDownTestSuite() { dicomWebSuite.reset(); }
  void SetUp() override {
    const bool ready = dicomWebSuite.prepareOnce(prepare);  // in the first test (tests/support/SharedSuite.h)
    if (!dicomWebSuite->skip.empty()) MEDSEG_MISSING_COMPONENT(dicomWebSuite->skip);
    ASSERT_TRUE(ready && dicomWebSuite->orthanc) << dicomWebSuite.failure();
  }
  static std::string web() { return dicomWebSuite->orthanc->dicomWebRoot(); }
  static std::string dimse() { return dicomWebSuite->orthanc->server(); }
  static fs::path scratch(const std::string& name) { return dicomWebSuite->dir->path() / name; }
  // dicomweb://127.0.0.1:PORT/dicom-web/UID
  static std::string dicomWebUri(const std::string& uid) { return "dicomweb://" + web().substr(7) + "/" + uid; }
};

TEST_F(PacsDicomWebCli, FindOverQidoListsWhatCFindLists) {
  const auto web = test::runMedseg({"--json", "pacs", "find", "--server", PacsDicomWebCli::web(), "--patient", "PACS001"});
  ASSERT_EQ(web.exitCode, 0) << web.output;
  const json result = resultEvent(web.output);
  EXPECT_EQ(result["server"], PacsDicomWebCli::web());
  ASSERT_EQ(result["studies"].size(), 1u) << web.output;
  const json& study = result["studies"][0];
  EXPECT_EQ(study["study_uid"], dicomWebSuite->study.studyUid);
  EXPECT_EQ(study["patient_id"], "PACS001");
  ASSERT_EQ(study["series"].size(), 4u);
  for (const auto& s : study["series"]) {
    EXPECT_EQ(s["modality"], "MR");
    EXPECT_EQ(s["instances"], 32);
  }
  const auto cfind = test::runMedseg({"--json", "pacs", "find", "--server", dimse(), "--patient", "PACS001"});
  ASSERT_EQ(cfind.exitCode, 0) << cfind.output;
  // Same records, in the same structures: study (patient, name, date, description) and series.
  auto bySeriesUid = [](json studies) {
    for (auto& s : studies)
      std::sort(s["series"].begin(), s["series"].end(),
                [](const json& a, const json& b) { return a["series_uid"] < b["series_uid"]; });
    return studies;
  };
  EXPECT_EQ(bySeriesUid(result["studies"]), bySeriesUid(resultEvent(cfind.output)["studies"]));

  const auto human = test::runMedseg({"pacs", "find", "--server", PacsDicomWebCli::web(), "--modality", "MR"});
  ASSERT_EQ(human.exitCode, 0) << human.output;
  EXPECT_NE(human.output.find("study " + dicomWebSuite->study.studyUid), std::string::npos) << human.output;
  EXPECT_NE(human.output.find("AX T1 post Gd"), std::string::npos) << human.output;
  EXPECT_NE(human.output.find("1 study on " + PacsDicomWebCli::web()), std::string::npos) << human.output;
  const auto none = test::runMedseg({"--json", "pacs", "find", "--server", PacsDicomWebCli::web(), "--modality", "CT"});
  ASSERT_EQ(none.exitCode, 0) << none.output;
  EXPECT_TRUE(resultEvent(none.output)["studies"].empty()) << none.output;
  const auto echo = test::runMedseg({"pacs", "echo", "--server", PacsDicomWebCli::web()});
  EXPECT_EQ(echo.exitCode, 0) << echo.output;
  EXPECT_NE(echo.output.find("answers (QIDO-RS)"), std::string::npos) << echo.output;
}

TEST_F(PacsDicomWebCli, GetOverWadoGivesTheCGetCopysFilesAndVolume) {
  for (int c = 0; c < 4; ++c) {
    const std::string uid = seriesUidOf(dicomWebSuite->study.seriesFolders[size_t(c)]);
    const fs::path viaWeb = scratch("wado-" + std::string(kPacsSeries[c].modality));
    const fs::path viaDimse = scratch("cget-" + std::string(kPacsSeries[c].modality));
    const auto get = test::runMedseg({"--json", "pacs", "get", "--server", web(), "--series", uid, "--out", viaWeb.string()});
    ASSERT_EQ(get.exitCode, 0) << get.output;
    EXPECT_EQ(resultEvent(get.output)["instances"], 32);
    int64_t progressed = 0;
    for (const auto& e : test::jsonLines(get.output)) progressed += e.value("event", "") == "progress";
    EXPECT_GT(progressed, 0) << get.output;
    ASSERT_EQ(test::runMedseg({"pacs", "get", "--server", dimse(), "--series", uid, "--out", viaDimse.string()}).exitCode, 0);

    ASSERT_EQ(test::filesIn(viaWeb).size(), test::filesIn(viaDimse).size());
    ASSERT_EQ(test::filesIn(viaWeb).size(), 32u);
    // As stored (transfer-syntax=*), as C-GET gets them.
    EXPECT_EQ(test::fileTransferSyntax(test::filesIn(viaWeb).front()), test::transferSyntaxUid(kPacsSeries[c].syntax))
        << kPacsSeries[c].modality;
    const ImageVolume web = readImage(viaWeb), cget = readImage(viaDimse);
    EXPECT_EQ(web.size, cget.size) << kPacsSeries[c].modality;
    EXPECT_EQ(web.data, cget.data) << kPacsSeries[c].modality;
    EXPECT_TRUE(web.geometry.sameAs(cget.geometry)) << kPacsSeries[c].modality;
  }
  // A folder that is not empty is refused before anything is asked.
  const fs::path full = scratch("wado-FLAIR");
  const auto again = test::runMedseg({"pacs", "get", "--server", web(), "--series",
                                      seriesUidOf(dicomWebSuite->study.seriesFolders[0]), "--out", full.string()});
  EXPECT_EQ(again.exitCode, 3) << again.output;
  EXPECT_NE(again.output.find("exists and is not empty"), std::string::npos) << again.output;
}

TEST_F(PacsDicomWebCli, InferFromDicomWebEqualsPacsAndItsSegGoesBackOverStow) {
  const fs::path root = scratch("infer");
  fs::create_directories(root);
  const std::string model = dicomWebSuite->study.model.string();
  const auto viaWeb = test::runMedseg({"--json", "infer", "--model", model, "--input", dicomWebUri(dicomWebSuite->study.studyUid),
                                       "--out", (root / "web.nii.gz").string()});
  ASSERT_EQ(viaWeb.exitCode, 0) << viaWeb.output;
  const auto viaDimse = test::runMedseg({"infer", "--model", model, "--input",
                                         "pacs://" + dimse() + "/" + dicomWebSuite->study.studyUid, "--out",
                                         (root / "dimse.nii.gz").string()});
  ASSERT_EQ(viaDimse.exitCode, 0) << viaDimse.output;
  const LabelVolume fromWeb = readLabels(root / "web.nii.gz"), fromDimse = readLabels(root / "dimse.nii.gz");
  EXPECT_EQ(fromWeb.data, fromDimse.data);
  EXPECT_TRUE(fromWeb.geometry.sameAs(fromDimse.geometry));
  int64_t labelled = 0;
  for (uint8_t v : fromDimse.data) labelled += v != 0;
  EXPECT_GT(labelled, 0) << "the tiny model labels nothing; the comparison would be empty";

  // The mask as a DICOM SEG over the DICOMweb input, sent back with STOW-RS.
  const std::string flairUid = seriesUidOf(dicomWebSuite->study.seriesFolders[0]);
  const fs::path seg = root / "web-seg.dcm";
  const auto segInfer = test::runMedseg({"infer", "--model", model, "--input", dicomWebUri(dicomWebSuite->study.studyUid),
                                         "--format", "seg", "--out", seg.string()});
  ASSERT_EQ(segInfer.exitCode, 0) << segInfer.output;
  const DicomSegImage read = readDicomSeg(seg);
  EXPECT_EQ(read.labels.data, fromDimse.data);
  EXPECT_EQ(read.referencedSeriesUid, flairUid);
  const auto store = test::runMedseg({"--json", "pacs", "store", "--server", web(), seg.string()});
  ASSERT_EQ(store.exitCode, 0) << store.output;
  const std::string segUid = resultEvent(store.output)["stored"][0]["sop_instance_uid"];
  const json lookup = json::parse(dicomWebSuite->orthanc->post("/tools/lookup", segUid));
  ASSERT_EQ(lookup.size(), 1u) << lookup.dump();
  const json tags = json::parse(dicomWebSuite->orthanc->get("/instances/" + lookup[0]["ID"].get<std::string>() + "/simplified-tags"));
  EXPECT_EQ(tags["Modality"], "SEG");
  EXPECT_EQ(tags["SOPClassUID"], "1.2.840.10008.5.1.4.1.1.66.4");
  EXPECT_EQ(tags["StudyInstanceUID"], dicomWebSuite->study.studyUid);
  ASSERT_TRUE(tags.contains("ReferencedSeriesSequence")) << tags.dump();
  EXPECT_EQ(tags["ReferencedSeriesSequence"][0]["SeriesInstanceUID"], flairUid);
  // A file the server cannot parse (header whole, pixel data cut short) is refused with a reason.
  std::string bytes = readTextFile(seg);
  const fs::path broken = root / "broken-seg.dcm";
  writeFileAtomically(broken, bytes.substr(0, bytes.find(std::string("\xe0\x7f\x10\x00", 4)) + 40));
  const auto refused = test::runMedseg({"pacs", "store", "--server", web(), broken.string()});
  EXPECT_EQ(refused.exitCode, 4) << refused.output;
  EXPECT_NE(refused.output.find("refused " + broken.string() + " (STOW-RS answered HTTP 4"), std::string::npos)
      << refused.output;

  // The model description's series_patterns choose the series: a TorchScript export whose
  // model.pt.json is given a FLAIR pattern that every series of the study matches is refused,
  // naming the pattern; one matching only the FLAIR series gives the same mask.
  const fs::path exported = root / "model.pt";
  const auto exportRun = test::runMedseg({"export", "--model", model, "--out", exported.string()});
  ASSERT_EQ(exportRun.exitCode, 0) << exportRun.output;
  json sidecar = json::parse(readTextFile(fs::path(exported.string() + ".json")));
  sidecar["series_patterns"] = {{"FLAIR", {"^ax"}}};
  writeFileAtomically(exported.string() + ".json", sidecar.dump(2));
  const fs::path patternMask = root / "pattern.nii.gz";
  const auto ambiguous = test::runMedseg({"infer", "--model", exported.string(), "--input", dicomWebUri(dicomWebSuite->study.studyUid),
                                          "--out", patternMask.string()});
  EXPECT_EQ(ambiguous.exitCode, 3) << ambiguous.output;
  EXPECT_NE(ambiguous.output.find("4 series descriptions match the model's modality FLAIR (by the model's series_patterns '^ax')"),
            std::string::npos)
      << ambiguous.output;
  EXPECT_FALSE(fs::exists(patternMask));
  sidecar["series_patterns"] = {{"FLAIR", {"^ax\\s+flair$"}}, {"T1gd", {"post\\s+gd"}}};
  writeFileAtomically(exported.string() + ".json", sidecar.dump(2));
  const auto matched = test::runMedseg({"infer", "--model", exported.string(), "--input", dicomWebUri(dicomWebSuite->study.studyUid),
                                        "--out", patternMask.string()});
  ASSERT_EQ(matched.exitCode, 0) << matched.output;
  EXPECT_EQ(readLabels(patternMask).data, fromDimse.data);
}

TEST_F(PacsDicomWebCli, RefusedConnectionUnknownSeriesAndWrongRootEndWithClearErrors) {
  const std::string down = "http://127.0.0.1:" + std::to_string(test::freeLoopbackPort()) + "/dicom-web";
  const auto refused = test::runMedseg({"pacs", "find", "--server", down});
  EXPECT_EQ(refused.exitCode, 4) << refused.output;
  EXPECT_NE(refused.output.find("cannot reach " + down), std::string::npos) << refused.output;
  const fs::path mask = scratch("errors-mask.nii.gz");
  const auto inferDown = test::runMedseg({"infer", "--model", dicomWebSuite->study.model.string(), "--input",
                                          "dicomweb://" + down.substr(7) + "/" + dicomWebSuite->study.studyUid, "--out", mask.string()});
  EXPECT_EQ(inferDown.exitCode, 4) << inferDown.output;
  EXPECT_NE(inferDown.output.find("cannot reach"), std::string::npos) << inferDown.output;
  EXPECT_FALSE(fs::exists(mask));

  const std::string unknown = test::randomUid();
  const fs::path out = scratch("unknown-series");
  const auto missing = test::runMedseg({"pacs", "get", "--server", web(), "--series", unknown, "--out", out.string()});
  EXPECT_EQ(missing.exitCode, 3) << missing.output;
  EXPECT_NE(missing.output.find("has no series " + unknown), std::string::npos) << missing.output;
  EXPECT_FALSE(fs::exists(out));
  const auto inferMissing = test::runMedseg({"infer", "--model", dicomWebSuite->study.model.string(), "--input", dicomWebUri(unknown),
                                             "--out", mask.string()});
  EXPECT_EQ(inferMissing.exitCode, 3) << inferMissing.output;
  EXPECT_NE(inferMissing.output.find("has no study or series " + unknown), std::string::npos) << inferMissing.output;
  EXPECT_FALSE(fs::exists(mask));

  // Orthanc's own REST root is no DICOMweb root: its 404 says so.
  const std::string wrongRoot = "http://127.0.0.1:" + std::to_string(dicomWebSuite->orthanc->httpPort()) + "/not-dicom-web";
  const auto notFound = test::runMedseg({"pacs", "get", "--server", wrongRoot, "--series",
                                         seriesUidOf(dicomWebSuite->study.seriesFolders[0]), "--out", out.string()});
  EXPECT_EQ(notFound.exitCode, 3) << notFound.output;
  EXPECT_NE(notFound.output.find("HTTP 404 Not Found"), std::string::npos) << notFound.output;
  EXPECT_NE(notFound.output.find("check the DICOMweb root"), std::string::npos) << notFound.output;
  EXPECT_FALSE(fs::exists(out));
  const auto malformed = test::runMedseg({"pacs", "find", "--server", "http://127.0.0.1:99999/dicom-web"});
  EXPECT_EQ(malformed.exitCode, 3) << malformed.output;
  EXPECT_NE(malformed.output.find("port '99999'"), std::string::npos) << malformed.output;
}

TEST_F(PacsDicomWebCli, WadoRetrieveCutOffMidSeriesLeavesNoFolderAndNoMask) {
  // The relay passes the QIDO-RS answers and about half of the FLAIR series' bytes, then drops.
  int64_t seriesBytes = 0;
  for (const auto& f : test::filesIn(dicomWebSuite->study.seriesFolders.front())) seriesBytes += int64_t(fs::file_size(f));
  test::CuttingProxy proxy(dicomWebSuite->orthanc->httpPort(), seriesBytes / 2);
  const std::string server = "http://127.0.0.1:" + std::to_string(proxy.port()) + "/dicom-web";
  const fs::path config = scratch("pacs-short.json");
  writeFileAtomically(config, R"({"connect_timeout_seconds": 5, "dimse_timeout_seconds": 10})");
  const fs::path out = scratch("cut");
  const auto get = test::runMedseg({"pacs", "get", "--server", server, "--pacs-config", config.string(), "--series",
                                    seriesUidOf(dicomWebSuite->study.seriesFolders.front()), "--out", out.string()});
  EXPECT_EQ(get.exitCode, 4) << get.output;
  EXPECT_NE(get.output.find("was cut off after"), std::string::npos) << get.output;
  EXPECT_NE(get.output.find("of 32 instances"), std::string::npos) << get.output;
  EXPECT_NE(get.output.find("nothing was kept"), std::string::npos) << get.output;
  EXPECT_FALSE(fs::exists(out));
  for (const auto& e : fs::directory_iterator(dicomWebSuite->dir->path()))
    EXPECT_EQ(e.path().filename().string().find(".cut"), std::string::npos) << "staging left behind: " << e.path();
  EXPECT_GE(proxy.cutConnections(), 1);

  const fs::path mask = scratch("cut-mask.nii.gz");
  const auto infer = test::runMedseg({"infer", "--model", dicomWebSuite->study.model.string(), "--input",
                                      "dicomweb://" + server.substr(7) + "/" + dicomWebSuite->study.studyUid, "--pacs-config",
                                      config.string(), "--out", mask.string()});
  EXPECT_EQ(infer.exitCode, 4) << infer.output;
  EXPECT_NE(infer.output.find("was cut off"), std::string::npos) << infer.output;
  EXPECT_FALSE(fs::exists(mask));
}

}  // namespace
}  // namespace medseg
