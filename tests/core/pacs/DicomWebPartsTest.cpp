// The pieces of DICOMweb that need no server: the multipart reader a WADO-RS series streams
// through (parts split anywhere across reads, a body without its closing boundary is incomplete,
// garbage is refused), the boundary of a Content-Type, and the DICOMweb addresses (--server
// http(s)://..., dicomweb:// inputs, DICOMweb peers of the PACS config).
#include <gtest/gtest.h>

#include "core/pacs/DicomWebServer.h"
#include "core/pacs/MultipartReader.h"
#include "core/pacs/PacsClient.h"
#include "core/pacs/PacsConfig.h"
#include "core/pacs/PacsError.h"
#include "core/util/Interrupt.h"
#include "support/TestSupport.h"

namespace medseg {
namespace {

struct Collected {
  std::vector<std::string> parts;
  std::vector<std::map<std::string, std::string>> headers;
  bool open = false;
};

MultipartReader readerInto(Collected& c, const std::string& boundary) {
  MultipartReader::Handler h;
  h.begin = [&c](const std::map<std::string, std::string>& headers) {
    c.headers.push_back(headers);
    c.parts.emplace_back();
    c.open = true;
  };
  h.data = [&c](const char* data, size_t size) { c.parts.back().append(data, size); };
  h.end = [&c] { c.open = false; };
  return MultipartReader(boundary, h);
}

std::string body(const std::string& boundary, const std::vector<std::string>& parts) {
  std::string out = "preamble\r\n";
  for (const auto& p : parts) out += "--" + boundary + "\r\nContent-Type: application/dicom\r\nContent-Length: " +
                                      std::to_string(p.size()) + "\r\n\r\n" + p + "\r\n";
  return out + "--" + boundary + "--\r\nepilogue";
}

TEST(MultipartReader, PartsSplitAnywhereAcrossReadsComeOutWhole) {
  const std::string boundary = "b0undary-42";
  // Contents that hold near-delimiters: CRLF, "--", the boundary without its leading CRLF--.
  const std::vector<std::string> parts{std::string(128, '\0') + "DICM\r\n--b0undary-4x",
                                       "\r\n\r\n--b0undary-4", std::string(1000, 'x'), ""};
  const std::string whole = body(boundary, parts);
  for (size_t chunk : {size_t(1), size_t(2), size_t(3), size_t(7), size_t(64), whole.size()}) {
    Collected c;
    MultipartReader reader = readerInto(c, boundary);
    for (size_t at = 0; at < whole.size(); at += chunk) reader.feed(whole.data() + at, std::min(chunk, whole.size() - at));
    EXPECT_TRUE(reader.complete()) << "chunk " << chunk;
    EXPECT_EQ(reader.partsCompleted(), 4) << "chunk " << chunk;
    EXPECT_EQ(c.parts, parts) << "chunk " << chunk;
    ASSERT_EQ(c.headers.size(), 4u);
    EXPECT_EQ(c.headers[0].at("content-type"), "application/dicom");
  }
}

TEST(MultipartReader, ABodyCutOffIsIncompleteAndGarbageIsRefused) {
  const std::string whole = body("xyz", {"first", "second"});
  Collected c;
  MultipartReader reader = readerInto(c, "xyz");
  const std::string cut = whole.substr(0, whole.find("second") + 3);
  reader.feed(cut.data(), cut.size());
  EXPECT_FALSE(reader.complete());
  EXPECT_EQ(reader.partsCompleted(), 1);
  EXPECT_TRUE(reader.insidePart());

  Collected none;
  MultipartReader noBoundary = readerInto(none, "xyz");
  const std::string page(70000, 'a');  // an HTML page, say, where a multipart body was announced
  EXPECT_THROW(noBoundary.feed(page.data(), page.size()), PacsError);
  Collected bad;
  MultipartReader garbage = readerInto(bad, "xyz");
  const std::string text = "--xyz trailing words\r\n";
  EXPECT_THROW(garbage.feed(text.data(), text.size()), PacsError);
}

TEST(MultipartReader, BoundaryOfAContentType) {
  EXPECT_EQ(multipartBoundary("multipart/related; type=\"application/dicom\"; boundary=abc-1"), "abc-1");
  EXPECT_EQ(multipartBoundary("Multipart/Related; Boundary=\"a b;c\"; type=\"application/dicom\""), "a b;c");
  EXPECT_EQ(multipartBoundary("multipart/related;boundary=X"), "X");
  EXPECT_EQ(multipartBoundary("application/dicom+json"), "");
  EXPECT_EQ(multipartBoundary("multipart/related; type=\"application/dicom\""), "");
}

TEST(DicomWebServer, ParsesRootsDicomWebInputsAndPeers) {
  EXPECT_EQ(parseDicomWebServer("http://127.0.0.1:8042/dicom-web/").root, "http://127.0.0.1:8042/dicom-web");
  EXPECT_EQ(parseDicomWebServer("https://user:secret@pacs.example.org/dicom-web").describe(),
            "https://pacs.example.org/dicom-web");  // credentials stay out of messages
  EXPECT_NE(test::inputErrorMessageOf([] { parseDicomWebServer("http://host:99999/x"); }).find("port '99999'"), std::string::npos);
  EXPECT_NE(test::inputErrorMessageOf([] { parseDicomWebServer("http:///dicom-web"); }).find("no host"), std::string::npos);
  EXPECT_NE(test::inputErrorMessageOf([] { parseDicomWebServer("http://host/dicom-web?x=1"); }).find("without a query"), std::string::npos);

  const PacsConfig config = parsePacsConfig(R"({"peers": {"web": "http://10.0.0.5:8042/dicom-web",
                                                          "dimse": "ORTHANC@10.0.0.5:4242"}})", "pacs.json");
  EXPECT_EQ(config.dicomWebPeers.at("web").root, "http://10.0.0.5:8042/dicom-web");
  EXPECT_EQ(config.peers.at("dimse").port, 4242);

  const DicomWebUri study = parseDicomWebUri("dicomweb://127.0.0.1:8042/dicom-web/1.2.840.113619.2.55", config);
  EXPECT_EQ(study.server.root, "http://127.0.0.1:8042/dicom-web");
  EXPECT_EQ(study.uid, "1.2.840.113619.2.55");
  const DicomWebUri bare = parseDicomWebUri("dicomwebs://pacs.example.org/dicom-web/", config);
  EXPECT_EQ(bare.server.root, "https://pacs.example.org/dicom-web");
  EXPECT_TRUE(bare.uid.empty());
  EXPECT_EQ(parseDicomWebUri("dicomweb://web/1.2.3", config).server.root, "http://10.0.0.5:8042/dicom-web");
  EXPECT_NE(test::inputErrorMessageOf([&] { parseDicomWebUri("dicomweb:///1.2.3", config); }).find("dicomweb://host:port/ROOT/UID"),
            std::string::npos);

  EXPECT_TRUE(isPacsAddress("dicomweb://h/1.2"));
  EXPECT_TRUE(isPacsAddress("pacs://A@h:1/1.2"));
  EXPECT_FALSE(isPacsAddress("/data/case.nii.gz"));
  EXPECT_EQ(makePacsClient("http://127.0.0.1:8042/dicom-web", config)->describe(), "http://127.0.0.1:8042/dicom-web");
  EXPECT_EQ(makePacsClient("web", config)->describe(), "http://10.0.0.5:8042/dicom-web");
  EXPECT_EQ(makePacsClient("dimse", config)->describe(), "ORTHANC@10.0.0.5:4242");
  const std::string neither = test::inputErrorMessageOf([&] { makePacsClient("orthanc-without-port", config); });
  EXPECT_NE(neither.find("AET@host:port"), std::string::npos) << neither;
  EXPECT_NE(neither.find("http(s)://host:port/ROOT"), std::string::npos) << neither;
}

}  // namespace
}  // namespace medseg
