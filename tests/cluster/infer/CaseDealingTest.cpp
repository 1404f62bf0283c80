// Dealing inference cases to ranks (cluster/infer/CaseDealing.h): largest first, one claim per case,
// finished masks skipped, each case recorded in progress.jsonl.
#include <gtest/gtest.h>

#include <thread>

#include "cluster/infer/CaseDealing.h"
#include "core/util/AtomicFile.h"
#include "support/TestSupport.h"

namespace medseg::cluster {
namespace {

namespace fs = std::filesystem;

InferenceCase job(const std::string& id, const fs::path& out) {
  InferenceCase c;
  c.entry.id = id;
  c.labelsOut = out / (id + ".nii.gz");
  return c;
}

TEST(CaseDealing, LargestCasesFirstTiesById) {
  const std::map<std::string, int64_t> voxels{{"a", 10}, {"b", 30}, {"c", 20}, {"d", 30}};
  std::vector<InferenceCase> cases;
  for (const auto& [id, n] : voxels) cases.push_back(job(id, "out"));
  const auto ordered = orderLargestFirst(cases, [&](const InferenceCase& c) { return voxels.at(c.entry.id); });
  std::vector<std::string> ids;
  for (const auto& c : ordered) ids.push_back(c.entry.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"b", "d", "c", "a"}));
}

TEST(CaseDealing, EachCaseIsClaimedOnceAmongConcurrentRanks) {
  test::ScratchDir scratch("claims");
  const ClaimFiles claims(scratch / "claims");
  claims.reset();
  std::atomic<int> won{0};
  std::vector<std::thread> ranks;
  for (int r = 0; r < 8; ++r)
    ranks.emplace_back([&] {
      for (int i = 0; i < 50; ++i)
        if (claims.claim("case-" + std::to_string(i))) ++won;
    });
  for (auto& t : ranks) t.join();
  EXPECT_EQ(won.load(), 50);
  // A new attempt starts with no claims.
  claims.reset();
  EXPECT_TRUE(claims.claim("case-0"));
}

TEST(CaseDealing, ExistingMasksAreSkippedAndCasesRecorded) {
  test::ScratchDir scratch("dealer");
  fs::create_directories(scratch / "masks");
  writeFileAtomically(scratch / "masks" / "done.nii.gz", "written by an earlier attempt");
  ClaimFiles claims(scratch / "claims");
  claims.reset();
  RankCaseDealer rank0(claims, scratch / "progress.jsonl", 0, "cpu");
  RankCaseDealer rank1(claims, scratch / "progress.jsonl", 1, "cuda:1");
  EXPECT_FALSE(rank0.claim(job("done", scratch / "masks")));
  EXPECT_TRUE(rank1.claim(job("new", scratch / "masks")));
  EXPECT_FALSE(rank0.claim(job("new", scratch / "masks")));
  EXPECT_EQ(rank0.taken(), 0);
  EXPECT_EQ(rank1.taken(), 1);
  InferenceCase taken = job("new", scratch / "masks");
  taken.entry.images = {"/data/imagesTr/new.nii.gz"};
  rank1.done(taken, {{"case", "new"}, {"status", "ok"}});
  const auto line = nlohmann::json::parse(readTextFile(scratch / "progress.jsonl"));
  EXPECT_EQ(line["case"], "new");
  EXPECT_EQ(line["rank"], 1);
  EXPECT_EQ(line["device"], "cuda:1");
  EXPECT_EQ(line["images"], nlohmann::json::array({"/data/imagesTr/new.nii.gz"}));
}

}  // namespace
}  // namespace medseg::cluster
