// DICOM networking over TLS (PacsConfig "tls", DCMTK's dcmtls): Orthanc started with DICOM TLS on its
// DICOM port (DicomTlsEnabled, client certificates required; support/OrthancServer.h's
// OrthancOptions::tls*), with a CA, server and client certificates made by `openssl` in the test.
// A one-series study uploaded through Orthanc's REST API is then checked:
//   - with a config naming the CA, our certificate and key: pacs echo, find and get work, and the
//     retrieved series reads like the upload;
//   - without TLS, or trusting another CA, or without a client certificate: exit 4, a message that
//     names TLS where it was asked for, and no folder.
// Skipped, saying so, when Orthanc, openssl or the DICOM tools are not installed.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/io/ImageIO.h"
#include "core/util/AtomicFile.h"
#include "support/PacsTestStudy.h"
#include "support/SharedSuite.h"
#include "support/MissingComponent.h"

namespace medseg {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::resultEvent;

struct TlsShared {
  std::unique_ptr<test::ScratchDir> dir;
  std::unique_ptr<test::OrthancServer> orthanc;
  fs::path series;   // as uploaded
  std::string seriesUid;
  std::string skip;
};
test::SharedSuite<TlsShared> tlsSuite;

// A key and a certificate signed by `ca` (or self-signed when ca is empty), PEM, in `dir`.
void makeCertificate(const fs::path& dir, const std::string& name, const std::string& ca) {
  const std::string key = (dir / (name + ".key")).string(), crt = (dir / (name + ".crt")).string();
  if (ca.empty()) {
    test::requireTool({"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", crt, "-days", "2",
                       "-subj", "/CN=" + name});
    return;
  }
  const std::string csr = (dir / (name + ".csr")).string();
  test::requireTool({"openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", "/CN=" + name});
  test::requireTool({"openssl", "x509", "-req", "-in", csr, "-CA", (dir / (ca + ".crt")).string(), "-CAkey",
                     (dir / (ca + ".key")).string(), "-CAcreateserial", "-out", crt, "-days", "2"});
}

class PacsTlsCli : public ::testing::Test {
 protected:
  static void prepare() {
    tlsSuite->skip = test::pacsTestsSkipReason(/*dicomWeb=*/false);
    if (tlsSuite->skip.empty() && !test::haveProgram("openssl")) tlsSuite->skip = "openssl is not installed (Debian package openssl)";
    if (!tlsSuite->skip.empty()) return;
    tlsSuite->dir = std::make_unique<test::ScratchDir>("pacs-tls-cli");
    const fs::path root = tlsSuite->dir->path();
    const fs::path pki = root / "pki";
    fs::create_directories(pki);
    makeCertificate(pki, "ca", "");
    makeCertificate(pki, "orthanc", "ca");
    makeCertificate(pki, "medseg", "ca");
    makeCertificate(pki, "stranger-ca", "");

    // A small series: a 24x20x12 ramp, uncompressed.
    ImageVolume volume({24, 20, 12}, 1);
    volume.geometry.spacing = {0.9, 0.9, 2.0};
    for (int64_t z = 0; z < 12; ++z)
      for (int64_t y = 0; y < 20; ++y)
        for (int64_t x = 0; x < 24; ++x) volume.at(x, y, z) = float(10 * x + 7 * y + 30 * z);
    tlsSuite->series = root / "upload";
    test::writeStudySeries(volume, tlsSuite->series, test::randomUid(), "TLS001", "AX FLAIR", 1,
                           test::TransferSyntax::ExplicitLittle);
    tlsSuite->seriesUid = test::seriesUidOf(tlsSuite->series);

    test::OrthancOptions options;
    options.tlsCertificate = (pki / "orthanc.crt").string();
    options.tlsPrivateKey = (pki / "orthanc.key").string();
    options.tlsTrustedCertificates = (pki / "ca.crt").string();
    tlsSuite->orthanc = std::make_unique<test::OrthancServer>(root / "orthanc", options);
    for (const auto& file : test::filesIn(tlsSuite->series)) tlsSuite->orthanc->post("/instances", readTextFile(file));

    // PACS configs: relative paths are the config file's folder's.
    writeFileAtomically(pki / "tls.json", R"({"tls": {"ca_certificates": "ca.crt", "certificate": "medseg.crt",
                                                     "private_key": "medseg.key"}, "connect_timeout_seconds": 5,
                                                     "dimse_timeout_seconds": 10})");
    writeFileAtomically(pki / "stranger.json", R"({"tls": {"ca_certificates": "stranger-ca.crt", "certificate": "medseg.crt",
                                                          "private_key": "medseg.key"}, "connect_timeout_seconds": 5,
                                                          "dimse_timeout_seconds": 10})");
    writeFileAtomically(pki / "no-client-certificate.json", R"({"tls": {"ca_certificates": "ca.crt"},
                                                                "connect_timeout_seconds": 5, "dimse_timeout_seconds": 10})");
    writeFileAtomically(pki / "plain.json", R"({"connect_timeout_seconds": 5, "dimse_timeout_seconds": 10})");
  }
  static void TearDownTestSuite() { tlsSuite.reset(); }
  void SetUp() override {
    const bool ready = tlsSuite.prepareOnce(prepare);  // in the first test (tests/support/SharedSuite.h)
    if (!tlsSuite->skip.empty()) MEDSEG_MISSING_COMPONENT(tlsSuite->skip);
    ASSERT_TRUE(ready && tlsSuite->orthanc) << tlsSuite.failure();
  }
  static std::string config(const std::string& name) { return (tlsSuite->dir->path() / "pki" / (name + ".json")).string(); }
};

TEST_F(PacsTlsCli, EchoFindAndGetWorkOverTls) {
  const std::string server = tlsSuite->orthanc->server();
  const auto echo = test::runMedseg({"pacs", "echo", "--server", server, "--pacs-config", config("tls")});
  ASSERT_EQ(echo.exitCode, 0) << echo.output << tlsSuite->orthanc->log();
  const auto find = test::runMedseg({"--json", "pacs", "find", "--server", server, "--pacs-config", config("tls"),
                                     "--patient", "TLS001"});
  ASSERT_EQ(find.exitCode, 0) << find.output;
  const json studies = resultEvent(find.output)["studies"];
  ASSERT_EQ(studies.size(), 1u) << find.output;
  ASSERT_EQ(studies[0]["series"].size(), 1u);
  EXPECT_EQ(studies[0]["series"][0]["series_uid"], tlsSuite->seriesUid);
  EXPECT_EQ(studies[0]["series"][0]["instances"], 12);

  const fs::path out = tlsSuite->dir->path() / "retrieved";
  const auto get = test::runMedseg({"--json", "pacs", "get", "--server", server, "--pacs-config", config("tls"), "--series",
                                    tlsSuite->seriesUid, "--out", out.string()});
  ASSERT_EQ(get.exitCode, 0) << get.output;
  ASSERT_EQ(test::filesIn(out).size(), 12u);
  const ImageVolume retrieved = readImage(out), uploaded = readImage(tlsSuite->series);
  EXPECT_EQ(retrieved.data, uploaded.data);
  EXPECT_TRUE(retrieved.geometry.sameAs(uploaded.geometry));
}

TEST_F(PacsTlsCli, PlainUntrustedAndAnonymousClientsAreRefused) {
  const std::string server = tlsSuite->orthanc->server();
  const auto plain = test::runMedseg({"pacs", "echo", "--server", server, "--pacs-config", config("plain")});
  EXPECT_EQ(plain.exitCode, 4) << plain.output;
  EXPECT_NE(plain.output.find("cannot reach " + server), std::string::npos) << plain.output;

  const auto untrusted = test::runMedseg({"pacs", "find", "--server", server, "--pacs-config", config("stranger")});
  EXPECT_EQ(untrusted.exitCode, 4) << untrusted.output;
  EXPECT_NE(untrusted.output.find("over TLS"), std::string::npos) << untrusted.output;
  EXPECT_NE(untrusted.output.find("stranger-ca.crt"), std::string::npos) << untrusted.output;

  const fs::path out = tlsSuite->dir->path() / "anonymous";
  const auto anonymous = test::runMedseg({"pacs", "get", "--server", server, "--pacs-config", config("no-client-certificate"),
                                          "--series", tlsSuite->seriesUid, "--out", out.string()});
  EXPECT_EQ(anonymous.exitCode, 4) << anonymous.output;
  EXPECT_NE(anonymous.output.find("over TLS"), std::string::npos) << anonymous.output;
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace medseg
