#pragma once
// A real PACS for the DICOM network tests: Debian's Orthanc started on free 127.0.0.1 ports (DICOM
// and HTTP) with its own scratch configuration and storage folder, stopped (SIGKILL of its process
// group) by the destructor. It checks the called AE title (a wrong one is rejected), accepts C-ECHO,
// C-FIND, C-GET and C-STORE from any calling AE, and answers its REST API on the HTTP port
// (httpGet), which the tests use to look at what was stored. With OrthancOptions::dicomWeb it also
// loads Debian's DICOMweb plugin (package orthanc-dicomweb) and serves QIDO-RS, WADO-RS and
// STOW-RS under dicomWebRoot() (http://127.0.0.1:PORT/dicom-web); with OrthancOptions::tlsCertificate
// its DICOM port speaks TLS only.
#include <chrono>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "core/util/AtomicFile.h"
#include "support/Loopback.h"
#include "support/MissingComponent.h"
#include "support/SpawnedProcess.h"

namespace medseg::test {

// Debian's Orthanc (/usr/sbin/Orthanc) as PATH finds it; "Orthanc" when PATH has none.
inline std::string orthancBinary() {
  const std::string found = findOnPath("Orthanc");
  return found.empty() ? "Orthanc" : found;
}
inline bool orthancAvailable() { return !findOnPath("Orthanc").empty(); }

// Debian's orthanc-dicomweb plugin, or "" when it is not installed.
inline std::string orthancDicomWebPlugin() {
  for (const char* path : {"/usr/share/orthanc/plugins/libOrthancDicomWeb.so", "/usr/lib/orthanc/libOrthancDicomWeb.so"})
    if (std::filesystem::exists(path)) return path;
  return {};
}

struct OrthancOptions {
  std::string aeTitle = "ORTHANCTEST";
  bool dicomWeb = false;  // load the DICOMweb plugin (orthancDicomWebPlugin() must exist)
  // DICOM TLS on the DICOM port (PEM files; every association must be TLS, and the client must
  // show a certificate signed by tlsTrustedCertificates) when tlsCertificate is set.
  std::string tlsCertificate, tlsPrivateKey, tlsTrustedCertificates;
};

class OrthancServer {
 public:
  explicit OrthancServer(const std::filesystem::path& dir, OrthancOptions options = {})
      : dir_(dir), aeTitle_(std::move(options.aeTitle)), dicomPort_(freeLoopbackPort()), httpPort_(freeLoopbackPort()) {
    std::filesystem::create_directories(dir_ / "storage");
    std::string plugins = "[]";
    if (options.dicomWeb) {
      const std::string plugin = orthancDicomWebPlugin();
      if (plugin.empty()) throw std::runtime_error("Orthanc's DICOMweb plugin is not installed (Debian package orthanc-dicomweb)");
      plugins = "[\"" + plugin + "\"],\n  \"DicomWeb\": {\"Enable\": true, \"Root\": \"/dicom-web/\"}";
    }
    std::string tls;
    if (!options.tlsCertificate.empty())
      tls = "  \"DicomTlsEnabled\": true,\n  \"DicomTlsCertificate\": \"" + options.tlsCertificate +
            "\",\n  \"DicomTlsPrivateKey\": \"" + options.tlsPrivateKey + "\",\n  \"DicomTlsTrustedCertificates\": \"" +
            options.tlsTrustedCertificates + "\",\n  \"DicomTlsRemoteCertificateRequired\": true,\n";
    const std::string config =
        "{\n  \"Name\": \"medseg-test\",\n  \"StorageDirectory\": \"" + (dir_ / "storage").string() +
        "\",\n  \"IndexDirectory\": \"" + (dir_ / "storage").string() + "\",\n  \"DicomAet\": \"" + aeTitle_ +
        "\",\n  \"DicomPort\": " + std::to_string(dicomPort_) + ",\n  \"HttpPort\": " + std::to_string(httpPort_) +
        ",\n  \"RemoteAccessAllowed\": false,\n  \"AuthenticationEnabled\": false,\n  \"DicomCheckCalledAet\": true,\n"
        "  \"DicomAlwaysAllowEcho\": true,\n  \"DicomAlwaysAllowStore\": true,\n  \"DicomAlwaysAllowFind\": true,\n" +
        tls + "  \"DicomAlwaysAllowGet\": true,\n  \"DicomAlwaysAllowMove\": true,\n  \"UnknownSopClassAccepted\": true,\n"
        "  \"Plugins\": " + plugins + ",\n  \"StableAge\": 1,\n  \"SaveJobs\": false\n}\n";
    writeFileAtomically(dir_ / "orthanc.json", config);
    log_ = std::make_unique<LogFile>(dir_ / "orthanc.log");
    process_ = std::make_unique<SpawnedProcess>(std::vector<std::string>{orthancBinary(), (dir_ / "orthanc.json").string()},
                                                log_->fd());
    log_->close();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (true) {
      try {
        httpGet(httpPort_, "/system");
        break;
      } catch (const std::exception&) {
      }
      if (!process_->running()) throw std::runtime_error("Orthanc exited at start: " + log());
      if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("Orthanc does not answer: " + log());
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  OrthancServer(const OrthancServer&) = delete;
  OrthancServer& operator=(const OrthancServer&) = delete;

  const std::string& aeTitle() const { return aeTitle_; }
  int dicomPort() const { return dicomPort_; }
  int httpPort() const { return httpPort_; }
  // "AET@127.0.0.1:port", the --server form.
  std::string server() const { return aeTitle_ + "@127.0.0.1:" + std::to_string(dicomPort_); }
  // "http://127.0.0.1:port/dicom-web", the DICOMweb --server form (with OrthancOptions::dicomWeb).
  std::string dicomWebRoot() const { return "http://127.0.0.1:" + std::to_string(httpPort_) + "/dicom-web"; }
  std::string get(const std::string& path) const { return httpGet(httpPort_, path); }
  std::string post(const std::string& path, const std::string& body) const { return httpRequest(httpPort_, "POST", path, body); }
  std::string log() const { return readTextFile(dir_ / "orthanc.log"); }

 private:
  std::filesystem::path dir_;
  std::string aeTitle_;
  int dicomPort_;
  int httpPort_;
  std::unique_ptr<LogFile> log_;
  std::unique_ptr<SpawnedProcess> process_;
};

}  // namespace medseg::test
