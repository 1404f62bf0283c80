// Faults while writing: a write that runs out of room keeps the previous file and says why; the
// temporaries of writers that were killed mid-write are cleaned up, those of live writers are not.
#include "core/util/AtomicFile.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <set>

#include "support/TestSupport.h"

namespace medseg {
namespace {
namespace fs = std::filesystem;

// The id of a process that has exited and been reaped, so no process has it (until the id is reused,
// which takes a full wrap of the pid space).
pid_t deadProcessId() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

TEST(AtomicFileFaults, FileSizeLimitKeepsPreviousFileAndNamesTheCause) {
  test::ScratchDir dir("atomic-efbig");
  const fs::path target = dir / "checkpoint.pt";
  writeFileAtomically(target, "previous");
  // setrlimit and SIGXFSZ would affect the whole test program: the failing write runs in a child,
  // which reports through its exit status (0: failed as expected with the right message).
  const fs::path messageFile = dir / "message.txt";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);  // write() then fails with EFBIG instead of killing the process
    const rlimit limit{4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    try {
      writeFileAtomically(target, std::string(64 * 1024, 'x'));
    } catch (const std::exception& error) {
      const std::string message = error.what();
      std::ofstream(messageFile) << message;  // smaller than the limit
      ::_exit(message.find("checkpoint.pt") != std::string::npos && message.find("File too large") != std::string::npos
                  ? 0 : 2);
    }
    ::_exit(1);  // the oversized write succeeded
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << (fs::exists(messageFile) ? readTextFile(messageFile) : "no error raised");
  EXPECT_EQ(readTextFile(target), "previous");
  EXPECT_EQ(test::folderContents(dir.path()), (std::set<std::string>{"checkpoint.pt", "message.txt"}));
}

TEST(AtomicFileFaults, StaleTemporariesOfDeadWritersAreRemoved) {
  test::ScratchDir dir("atomic-stale");
  const fs::path target = dir / "checkpoint.pt";
  writeFileAtomically(target, "intact");
  const std::string dead = ".checkpoint.pt.tmp-" + std::to_string(deadProcessId()) + "-3.pt";
  const std::string mine = ".checkpoint.pt.tmp-" + std::to_string(::getpid()) + "-0.pt";
  const std::string live = ".checkpoint.pt.tmp-" + std::to_string(::getppid()) + "-1.pt";
  const std::string otherTarget = ".best.pt.tmp-" + std::to_string(deadProcessId()) + "-0.pt";
  const std::string notOurs = ".checkpoint.pt.tmp-notapid.pt";
  for (const auto& name : {dead, mine, live, otherTarget, notOurs}) std::ofstream(dir / name) << "partial";

  EXPECT_EQ(removeStaleTemporaries(target), 1u);
  EXPECT_EQ(test::folderContents(dir.path()), (std::set<std::string>{"checkpoint.pt", mine, live, otherTarget, notOurs}));
  EXPECT_EQ(readTextFile(target), "intact");
  EXPECT_EQ(removeStaleTemporaries(dir / "best.pt"), 1u);
  EXPECT_EQ(removeStaleTemporaries(dir / "absent" / "x.pt"), 0u);  // a missing folder is not an error
}

}  // namespace
}  // namespace medseg
