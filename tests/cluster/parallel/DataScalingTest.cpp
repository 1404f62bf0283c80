// `medseg scaling --mode data` end to end on 1 and 2 ranks (mpirun, oversubscribed): the 2-rank run
// times MPI_Allreduce at several sizes, the link is fitted from them and labelled measured, the
// NVLink / InfiniBand constants stay labelled assumed with their sources, and sizes beyond this
// machine appear as predictions only.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "cluster/parallel/MpiTestSupport.h"
#include "cluster/scaling/PerformanceModel.h"
#include "support/TestSupport.h"

namespace medseg::cluster {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace test_support;

TEST(DataScaling, TheLinkIsMeasuredHereAndTheRestIsLabelledAssumed) {
  TinyRun run;
  allowMpiAsRoot();
  const fs::path out = run.scratch / "scaling";
  const auto result = medseg::test::runMedseg({"--json", "scaling", "--mode", "data", "--workers", "1,2", "--config",
                                               run.config.string(), "--data", run.data.string(), "--out", out.string(),
                                               "--predict-workers", "8,32"});
  ASSERT_EQ(result.exitCode, 0) << result.output;
  const json probe = json::parse(readTextFile(out / "data-2" / "allreduce.json"));
  EXPECT_EQ(probe["ranks"], 2);
  ASSERT_GE(probe["samples"].size(), 2u) << "alpha and beta need two or more message sizes";
  const json report = json::parse(readTextFile(out / "scaling.json"));
  ASSERT_TRUE(report["model"].contains("this_machine_link")) << report["model"].dump(2);
  EXPECT_FALSE(report["model"]["this_machine_link"].contains("error")) << report["model"]["this_machine_link"].dump(2);
  EXPECT_GT(report["model"]["this_machine_link"]["gb_per_s"].get<double>(), 0.0);

  std::set<std::string> measured, assumed;
  for (const auto& input : report["measured_inputs"]) {
    EXPECT_EQ(input["kind"], "measured");
    EXPECT_FALSE(input["source"].get<std::string>().empty());
    measured.insert(input["name"]);
  }
  for (const auto& input : report["assumed_inputs"]) {
    EXPECT_EQ(input["kind"], "assumed");
    EXPECT_FALSE(input["source"].get<std::string>().empty());
    assumed.insert(input["name"]);
  }
  for (const char* name : {"this_machine.alpha_seconds", "this_machine.bytes_per_second", "data.compute_seconds_per_step"})
    EXPECT_TRUE(measured.count(name)) << name;
  for (const char* name : {"intra_node.bytes_per_second", "inter_node.bytes_per_second", "overlap", "seed.startup_seconds"})
    EXPECT_TRUE(assumed.count(name)) << name;

  ASSERT_EQ(report["rows"].size(), 4u);  // measured 1, 2; predicted 8, 32
  EXPECT_EQ(report["rows"][1]["kind"], "measured");
  EXPECT_GT(report["rows"][1]["measured_speedup"].get<double>(), 0.0);
  // Sizes beyond this machine are the model's alone, computed from the inputs the report records:
  // the compute measured on one rank, the gradient bytes and the assumed NVLink / InfiniBand links.
  const json& model = report["model"];
  DataParallelModel recorded;
  recorded.computeSecondsPerStep = model["compute_seconds_per_step"].get<double>();
  recorded.modelBytes = model["gradient_bytes"].get<double>();
  recorded.overlap = model["overlap"].get<double>();
  recorded.intraNode = {model["intra_node"]["alpha_us"].get<double>() * 1e-6, model["intra_node"]["gb_per_s"].get<double>() * 1e9};
  recorded.interNode = {model["inter_node"]["alpha_us"].get<double>() * 1e-6, model["inter_node"]["gb_per_s"].get<double>() * 1e9};
  const int gpusPerNode = model["gpus_per_node_predicted"].get<int>();
  for (size_t i : {2u, 3u}) {
    const json& row = report["rows"][i];
    EXPECT_EQ(row["kind"], "predicted");
    EXPECT_FALSE(row.contains("seconds"));
    const int ranks = row["workers"].get<int>();
    const auto expected = predictDataParallel(recorded, (ranks + gpusPerNode - 1) / gpusPerNode, std::min(ranks, gpusPerNode));
    EXPECT_NEAR(row["predicted_speedup"].get<double>(), expected.speedup, 1e-9 * expected.speedup) << ranks << " ranks";
    EXPECT_LT(row["predicted_speedup"].get<double>(), ranks) << "communication costs something";
  }
  const std::string csv = readTextFile(out / "scaling.csv");
  EXPECT_NE(csv.find(",predicted\n"), std::string::npos);
  EXPECT_NE(csv.find("this_machine.bytes_per_second"), std::string::npos);
  EXPECT_NE(readTextFile(out / "scaling.svg").find("Model inputs not measured here (published or assumed)"), std::string::npos);
}

}  // namespace
}  // namespace medseg::cluster
