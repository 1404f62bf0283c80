// Rank-to-device placement (cluster/parallel/DevicePlacement.h) with simulated device counts: no GPU
// is needed, the decision is a function of local rank, ranks per node, visible devices and the config.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>

#include "cluster/parallel/DevicePlacement.h"
#include "core/util/Interrupt.h"

namespace medseg::cluster {
namespace {

TEST(DevicePlacement, OneGpuPerLocalRankOnFourAndEightGpuNodes) {
  for (const int gpus : {4, 8}) {
    std::set<std::string> devices;
    for (int local = 0; local < gpus; ++local) {
      const auto p = placeRank(local, gpus, gpus, "auto");
      EXPECT_EQ(p.device, "cuda:" + std::to_string(local));
      EXPECT_FALSE(p.shared()) << p.message;
      EXPECT_EQ(p.message.find("shares"), std::string::npos) << p.message;
      devices.insert(p.device);
    }
    EXPECT_EQ(devices.size(), size_t(gpus));
  }
  EXPECT_EQ(placeRank(0, 1, 1, "cuda").device, "cuda:0");
  EXPECT_EQ(placeRank(3, 4, 4, "cuda").device, "cuda:3");
}

TEST(DevicePlacement, EightRanksOnTwoNodesOfFourGpusUseFourDistinctDevicesPerNode) {
  const auto plan = planPlacement(8, 4, 4, "auto");
  ASSERT_EQ(plan.size(), 8u);
  std::map<int, std::set<std::string>> perNode;
  for (const auto& row : plan) {
    EXPECT_EQ(row.node, row.rank / 4);
    EXPECT_EQ(row.placement.localRank, row.rank % 4);
    EXPECT_FALSE(row.placement.shared());
    perNode[row.node].insert(row.placement.device);
  }
  ASSERT_EQ(perNode.size(), 2u);
  for (const auto& [node, devices] : perNode)
    EXPECT_EQ(devices, (std::set<std::string>{"cuda:0", "cuda:1", "cuda:2", "cuda:3"})) << "node " << node;
  EXPECT_EQ(plan[5].placement.device, "cuda:1");  // rank 5: node 1, local rank 1
}

TEST(DevicePlacement, ThreeRanksOnOneGpuShareItAndSaySo) {
  for (int local = 0; local < 3; ++local) {
    const auto p = placeRank(local, 3, 1, "auto");
    EXPECT_EQ(p.device, "cuda:0");
    EXPECT_TRUE(p.shared());
    EXPECT_EQ(p.ranksOnDevice, 3);
    EXPECT_NE(p.message.find("shares cuda:0 with 2 other ranks (3 ranks on 1 GPU)"), std::string::npos) << p.message;
  }
  const std::string table = placementTable(planPlacement(3, 3, 1, "auto"));
  EXPECT_NE(table.find("cuda:0  (shared by 3 ranks)"), std::string::npos) << table;
}

TEST(DevicePlacement, MoreRanksThanGpusShareRoundRobin) {
  // 6 ranks on 4 GPUs: cuda:0 and cuda:1 get two ranks each, cuda:2 and cuda:3 one.
  EXPECT_EQ(placeRank(4, 6, 4, "auto").device, "cuda:0");
  EXPECT_EQ(placeRank(4, 6, 4, "auto").ranksOnDevice, 2);
  EXPECT_EQ(placeRank(5, 6, 4, "auto").device, "cuda:1");
  EXPECT_FALSE(placeRank(2, 6, 4, "auto").shared());
  EXPECT_FALSE(placeRank(3, 6, 4, "auto").shared());
}

TEST(DevicePlacement, ConfigDeviceIsHonoured) {
  const auto fixed = placeRank(2, 4, 4, "cuda:3");
  EXPECT_EQ(fixed.device, "cuda:3");
  EXPECT_NE(fixed.message.find("as the config says"), std::string::npos) << fixed.message;
  EXPECT_EQ(placeRank(2, 4, 4, "cpu").device, "cpu");
  EXPECT_EQ(placeRank(1, 2, 0, "auto").device, "cpu");
  EXPECT_NE(placeRank(1, 2, 0, "auto").message.find("no CUDA device visible"), std::string::npos);
  EXPECT_EQ(placeRank(0, 1, 0, "").device, "cpu");
}

TEST(DevicePlacement, ImpossibleRequestsAreBadInput) {
  EXPECT_THROW(placeRank(0, 1, 0, "cuda"), InputError);
  EXPECT_THROW(placeRank(0, 1, 0, "cuda:0"), InputError);
  EXPECT_THROW(placeRank(0, 1, 2, "cuda:2"), InputError);
  EXPECT_THROW(placeRank(0, 1, 2, "cudax1"), InputError);
  EXPECT_THROW(placeRank(0, 1, 2, "cuda:one"), InputError);
  EXPECT_THROW(placeRank(0, 1, 2, "tpu"), InputError);
  try {
    placeRank(0, 1, 2, "cuda:5");
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("sees only 2 CUDA devices"), std::string::npos) << e.what();
  }
}

TEST(DevicePlacement, TrialChildSeesOnlyItsWorkersGpu) {
  const auto gpu = childProcessDevice("cuda:2");
  EXPECT_EQ(gpu.environment, std::vector<std::string>{"CUDA_VISIBLE_DEVICES=2"});
  EXPECT_EQ(gpu.device, "cuda:0");
  const auto cpu = childProcessDevice("cpu");
  EXPECT_TRUE(cpu.environment.empty());
  EXPECT_EQ(cpu.device, "cpu");
}

TEST(DevicePlacement, LocalRankFallsBackToTheLaunchersEnvironment) {
  unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
  unsetenv("SLURM_LOCALID");
  EXPECT_FALSE(localRankFromEnvironment().has_value());
  setenv("SLURM_LOCALID", "3", 1);
  EXPECT_EQ(localRankFromEnvironment(), 3);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);  // Open MPI's own value comes first
  EXPECT_EQ(localRankFromEnvironment(), 1);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "x", 1);  // not a number: the next source
  EXPECT_EQ(localRankFromEnvironment(), 3);
  unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
  unsetenv("SLURM_LOCALID");
}

}  // namespace
}  // namespace medseg::cluster
