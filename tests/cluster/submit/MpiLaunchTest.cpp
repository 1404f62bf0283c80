// The one mpirun command line (cluster/submit/MpiLaunch): the flags each kind of launch gets, the
// worker's arguments passed on unchanged, and a foreground job run here with its output in logs/.
#include <gtest/gtest.h>

#include <unistd.h>

#include "cluster/submit/LocalBackend.h"
#include "cluster/submit/MpiLaunch.h"
#include "cluster/submit/StubPrograms.h"
#include "core/util/AtomicFile.h"
#include "support/TestSupport.h"

namespace medseg::cluster {
namespace {

namespace fs = std::filesystem;
using test_support::splitNul;
using test_support::writeScript;

const std::vector<std::string> kWorker{"/opt/medseg/bin/medseg-worker", "--run-dir", "runs/a b; $(x)", "--set", "lr=1e-3"};

TEST(MpiLaunch, OnThisMachineOversubscribesAndAllowsRootOnlyWhenRoot) {
  std::vector<std::string> expected{"/usr/bin/mpirun", "-np", "4", "--oversubscribe"};
  if (::geteuid() == 0) expected.push_back("--allow-run-as-root");
  expected.insert(expected.end(), kWorker.begin(), kWorker.end());
  EXPECT_EQ(mpirunArgv({"/usr/bin/mpirun", 4, "", true, kWorker}), expected);
  EXPECT_EQ(mpiRootEnvironment().empty(), ::geteuid() != 0);
}

TEST(MpiLaunch, ClusterLaunchesNameTheHostfileAndAddNoLocalFlags) {
  std::vector<std::string> ssh{"mpirun", "--hostfile", "-odd hosts", "-np", "8"};
  ssh.insert(ssh.end(), kWorker.begin(), kWorker.end());
  EXPECT_EQ(mpirunArgv({"mpirun", 8, "-odd hosts", false, kWorker}), ssh);
  std::vector<std::string> slurm{"mpirun", "-np", "2"};
  slurm.insert(slurm.end(), kWorker.begin(), kWorker.end());
  EXPECT_EQ(mpirunArgv({"mpirun", 2, "", false, kWorker}), slurm);
}

TEST(MpiLaunch, LocalJobRunsInTheForegroundWithItsOutputInLogs) {
  test::ScratchDir scratch("mpi-launch");
  fs::create_directories(scratch / "logs");
  const auto stub = writeScript(scratch / "mpirun", "for a in \"$@\"; do printf '%s\\0' \"$a\"; done\necho said >&2\n");
  const auto argv = mpirunArgv({stub.string(), 2, "", true, kWorker});
  runLocalJob(argv, scratch.path(), "data run with 2 ranks");
  EXPECT_EQ(splitNul(readTextFile(scratch / "logs" / "launcher.out")), std::vector<std::string>(argv.begin() + 1, argv.end()));
  EXPECT_EQ(readTextFile(scratch / "logs" / "launcher.err"), "said\n");

  const auto failing = writeScript(scratch / "failing-mpirun", "exit 5\n");
  try {
    runLocalJob(mpirunArgv({failing.string(), 2, "", true, kWorker}), scratch.path(), "data run with 2 ranks");
    FAIL() << "a failing job must throw";
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("data run with 2 ranks failed (exit 5)"), std::string::npos) << message;
    EXPECT_NE(message.find((scratch / "logs" / "launcher.err").string()), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace medseg::cluster
