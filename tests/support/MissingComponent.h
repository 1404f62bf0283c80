#pragma once
// A test that needs a component this machine lacks (Orthanc, sshd, Slurm, a DICOM tool, Python's
// torch, root): outside CI it is skipped and says why; with CI=true (as .ci/run runs the suite) it
// fails and names the Debian package, so that CI can never go green with a suite that did not run.
//
//   if (!haveProgram("dcmodify")) MEDSEG_MISSING_COMPONENT("dcmodify is not installed (Debian package dcmtk)");
//   QT:  MEDSEG_QT_MISSING_COMPONENT("Orthanc is not installed (Debian package orthanc)");
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>

#include <unistd.h>

namespace medseg::test {

// The program's path as a shell would find it on PATH; empty when it is not there. Tests find their
// components this way, so that taking one off PATH shows what its tests do without it.
inline std::string findOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    const std::filesystem::path candidate = std::filesystem::path(dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0 && !std::filesystem::is_directory(candidate)) return candidate.string();
  }
  return "";
}

// CI=true or CI=1, as CI systems set it and .ci/run exports it.
inline bool runningInCi() {
  const char* ci = std::getenv("CI");
  return ci && (std::strcmp(ci, "true") == 0 || std::strcmp(ci, "1") == 0);
}

inline std::string missingInCi(const std::string& why) {
  return "CI=true, and this test cannot run: " + why + " (packaging/setup.sh installs it)";
}

}  // namespace medseg::test

#define MEDSEG_MISSING_COMPONENT(why)                                        \
  do {                                                                       \
    const std::string medsegMissingWhy_ = (why);                             \
    if (::medseg::test::runningInCi()) {                                     \
      FAIL() << ::medseg::test::missingInCi(medsegMissingWhy_);              \
    } else {                                                                 \
      GTEST_SKIP() << medsegMissingWhy_;                                     \
    }                                                                        \
  } while (0)

#define MEDSEG_QT_MISSING_COMPONENT(why)                                             \
  do {                                                                               \
    const std::string medsegMissingWhy_ = (why);                                     \
    if (::medseg::test::runningInCi()) QFAIL(::medseg::test::missingInCi(medsegMissingWhy_).c_str()); \
    QSKIP(medsegMissingWhy_.c_str());                                                \
  } while (0)
