// Outputs are replaced whole or not at all; journals only ever gain complete lines.
#include "core/util/AtomicFile.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>

#include "support/TestSupport.h"

namespace medseg {
namespace {
namespace fs = std::filesystem;

TEST(AtomicFile, TemporarySiblingKeepsFolderAndCompoundExtension) {
  const fs::path temp = temporarySiblingPath("/data/out/case.nii.gz");
  EXPECT_EQ(temp.parent_path(), fs::path("/data/out"));
  const std::string name = temp.filename().string();
  EXPECT_EQ(name.front(), '.');  // hidden while incomplete
  EXPECT_EQ(name.substr(name.size() - 7), ".nii.gz");
  EXPECT_NE(temporarySiblingPath("/data/out/case.nii.gz"), temp);  // unique per call
  EXPECT_EQ(temporarySiblingPath("model.pt").extension(), ".pt");
}

TEST(AtomicFile, WritesAndReplacesWholeFiles) {
  test::ScratchDir dir("atomic-write");
  writeFileAtomically(dir / "nested" / "a.txt", "first");
  EXPECT_EQ(readTextFile(dir / "nested" / "a.txt"), "first");
  writeFileAtomically(dir / "nested" / "a.txt", "second, longer content");
  EXPECT_EQ(readTextFile(dir / "nested" / "a.txt"), "second, longer content");
  EXPECT_EQ(test::folderContents(dir / "nested"), (std::set<std::string>{"a.txt"}));
}

TEST(AtomicFile, ThrowingWriterLeavesOldTargetAndNoTemporary) {
  test::ScratchDir dir("atomic-throw");
  const fs::path target = dir / "model.json";
  writeFileAtomically(target, "old");
  fs::path seenTemp;
  EXPECT_THROW(writeAtomically(target,
                               [&](const fs::path& temp) {
                                 seenTemp = temp;
                                 std::ofstream(temp) << "half-written";
                                 throw std::runtime_error("disk full");
                               }),
               std::runtime_error);
  EXPECT_EQ(seenTemp.parent_path(), target.parent_path());
  EXPECT_FALSE(fs::exists(seenTemp));
  EXPECT_EQ(readTextFile(target), "old");
  EXPECT_EQ(test::folderContents(dir.path()), (std::set<std::string>{"model.json"}));
}

TEST(AtomicFile, WriterThatProducesNothingIsAnError) {
  test::ScratchDir dir("atomic-nothing");
  EXPECT_THROW(writeAtomically(dir / "x.bin", [](const fs::path&) {}), std::runtime_error);
  EXPECT_TRUE(test::folderContents(dir.path()).empty());
}

TEST(AtomicFile, AppendLineDurablyAppendsWholeLines) {
  test::ScratchDir dir("atomic-append");
  const fs::path journal = dir / "logs" / "journal.jsonl";
  appendLineDurably(journal, R"({"epoch":1})");
  appendLineDurably(journal, "{\"epoch\":2}\n");  // an existing newline is not doubled
  EXPECT_EQ(readTextFile(journal), "{\"epoch\":1}\n{\"epoch\":2}\n");
}

TEST(AtomicFile, ConcurrentAppendersNeverInterleaveLines) {
  test::ScratchDir dir("atomic-concurrent");
  const fs::path journal = dir / "journal.txt";
  constexpr int kWriters = 4, kLines = 200;
  std::vector<pid_t> children;
  for (int w = 0; w < kWriters; ++w) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      const std::string line = "writer-" + std::to_string(w) + "-" + std::string(300, static_cast<char>('a' + w));
      for (int i = 0; i < kLines; ++i) appendLineDurably(journal, line);
      ::_exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) ::waitpid(pid, nullptr, 0);
  std::istringstream lines(readTextFile(journal));
  std::string line;
  int count = 0;
  while (std::getline(lines, line)) {
    ++count;
    ASSERT_EQ(line.size(), 309u) << line.substr(0, 40);
    EXPECT_EQ(line.find_first_not_of(line.back(), 9), std::string::npos);
  }
  EXPECT_EQ(count, kWriters * kLines);
}

TEST(AtomicFile, ReadTextFileRefusesFoldersMissingAndOversizedFiles) {
  test::ScratchDir dir("atomic-read");
  EXPECT_THROW(readTextFile(dir.path()), std::runtime_error);
  EXPECT_THROW(readTextFile(dir / "absent.txt"), std::runtime_error);
  writeFileAtomically(dir / "big.txt", std::string(100, 'x'));
  EXPECT_THROW(readTextFile(dir / "big.txt", 99), std::runtime_error);
  EXPECT_EQ(readTextFile(dir / "big.txt", 100).size(), 100u);
}

}  // namespace
}  // namespace medseg
