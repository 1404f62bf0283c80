// The PACS config file, peer addresses and pacs:// URIs: what is accepted, and the messages for
// what is not (all InputError, exit 3).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/util/AtomicFile.h"

#include "core/pacs/PacsConfig.h"
#include "core/pacs/PacsPeer.h"
#include "core/util/Interrupt.h"
#include "support/TestSupport.h"

namespace medseg {
namespace {

TEST(PacsConfig, ReadsAeTitleTimeoutsAndNamedPeers) {
  const PacsConfig c = parsePacsConfig(
      R"({"ae_title": "RESEARCH1", "connect_timeout_seconds": 3, "dimse_timeout_seconds": 20,
          "peers": {"orthanc": "ORTHANC@10.0.0.5:4242"}})", "pacs.json");
  EXPECT_EQ(c.aeTitle, "RESEARCH1");
  EXPECT_EQ(c.connectTimeoutSeconds, 3);
  EXPECT_EQ(c.dimseTimeoutSeconds, 20);
  const PacsPeer named = parsePacsPeer("orthanc", c);
  EXPECT_EQ(named.aeTitle, "ORTHANC");
  EXPECT_EQ(named.host, "10.0.0.5");
  EXPECT_EQ(named.port, 4242);
  EXPECT_EQ(parsePacsPeer("PACS@pacs.example.org:104", c).describe(), "PACS@pacs.example.org:104");
  const PacsConfig defaults;
  EXPECT_EQ(defaults.aeTitle, "MEDSEG");
}

TEST(PacsConfig, RefusesUnknownKeysBadTimeoutsAndAeTitles) {
  EXPECT_NE(test::inputErrorMessageOf([] { parsePacsConfig(R"({"aetitle": "X"})", "p.json"); }).find("unknown key 'aetitle'"), std::string::npos);
  EXPECT_NE(test::inputErrorMessageOf([] { parsePacsConfig(R"({"dimse_timeout_seconds": 0})", "p.json"); }).find("dimse_timeout_seconds"),
            std::string::npos);
  EXPECT_NE(test::inputErrorMessageOf([] { parsePacsConfig(R"({"ae_title": "MUCH_TOO_LONG_AE_TITLE"})", "p.json"); }).find("1 to 16"),
            std::string::npos);
  EXPECT_NE(test::inputErrorMessageOf([] { parsePacsConfig("{not json", "p.json"); }).find("p.json: not valid JSON"), std::string::npos);
  EXPECT_NE(test::inputErrorMessageOf([] { loadPacsConfig("/nonexistent/pacs.json"); }).find("does not exist"), std::string::npos);
}

TEST(PacsConfig, TlsFilesAreTheConfigFoldersAndChecked) {
  const auto dir = std::filesystem::temp_directory_path() / ("medseg-pacs-tls-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (const char* name : {"ca.pem", "me.pem", "me.key"}) writeFileAtomically(dir / name, "-----BEGIN CERTIFICATE-----\n");
  writeFileAtomically(dir / "pacs.json", R"({"tls": {"ca_certificates": "ca.pem", "certificate": "me.pem", "private_key": "me.key"}})");
  const PacsConfig c = loadPacsConfig(dir / "pacs.json");
  EXPECT_TRUE(c.tls.enabled());
  EXPECT_EQ(c.tls.caCertificates, dir / "ca.pem");
  EXPECT_EQ(c.tls.privateKey, dir / "me.key");
  EXPECT_FALSE(PacsConfig{}.tls.enabled());
  const std::string source = (dir / "pacs.json").string();
  EXPECT_NE(test::inputErrorMessageOf([&] { parsePacsConfig(R"({"tls": {"ca_certificates": "missing.pem"}})", source); })
                .find("tls.ca_certificates: " + (dir / "missing.pem").string() + " does not exist"),
            std::string::npos);
  EXPECT_NE(test::inputErrorMessageOf([&] { parsePacsConfig(R"({"tls": {"ca_certificates": "ca.pem", "certificate": "me.pem"}})", source); })
                .find("go together"),
            std::string::npos);
  EXPECT_NE(test::inputErrorMessageOf([&] { parsePacsConfig(R"({"tls": {"certificate": "me.pem", "private_key": "me.key"}})", source); })
                .find("needs ca_certificates"),
            std::string::npos);
  EXPECT_NE(test::inputErrorMessageOf([&] { parsePacsConfig(R"({"tls": {"ca": "ca.pem"}})", source); }).find("unknown key 'tls.ca'"),
            std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(PacsPeer, ParsesAddressesAndPacsUris) {
  const PacsConfig none;
  EXPECT_NE(test::inputErrorMessageOf([&] { parsePacsPeer("host:4242", none); }).find("AET@host:port"), std::string::npos);
  EXPECT_NE(test::inputErrorMessageOf([&] { parsePacsPeer("AE@host:99999", none); }).find("out of range"), std::string::npos);
  EXPECT_NE(test::inputErrorMessageOf([&] { parsePacsPeer("AE@host:", none); }).find("AET@host:port"), std::string::npos);
  const PacsUri uri = parsePacsUri("pacs://ORTHANC@127.0.0.1:4242/1.2.840.113619.2.55", none);
  EXPECT_EQ(uri.peer.port, 4242);
  EXPECT_EQ(uri.uid, "1.2.840.113619.2.55");
  EXPECT_TRUE(parsePacsUri("pacs://ORTHANC@127.0.0.1:4242", none).uid.empty());
  EXPECT_NE(test::inputErrorMessageOf([&] { parsePacsUri("pacs://ORTHANC@127.0.0.1:4242/abc", none); }).find("study or series UID"),
            std::string::npos);
  EXPECT_FALSE(isPacsUri("/data/case.nii.gz"));
}

}  // namespace
}  // namespace medseg
