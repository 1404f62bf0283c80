// `medseg submit --gpus-per-node N`: the Slurm GPU directives and the matching mpirun mapping, and the
// rank -> node -> device table of --dry-run (the placement every rank then makes, DevicePlacement.h).
#include <gtest/gtest.h>

#include "cluster/submit/SlurmBackend.h"
#include "cluster/submit/SshBackend.h"
#include "cluster/submit/Process.h"
#include "core/util/AtomicFile.h"
#include "support/TestSupport.h"

namespace medseg::cluster {
namespace {

namespace fs = std::filesystem;

RunSpec gpuSpec(const test::ScratchDir& scratch) {
  writeFileAtomically(scratch / "train.yaml", "epochs: 1\n");
  RunSpec spec;
  spec.name = "gpu-run";
  spec.ranks = 8;
  spec.nodes = 2;
  spec.gpusPerNode = 4;
  spec.configPath = (scratch / "train.yaml").string();
  return spec;
}

TEST(GpuPlacementSubmit, SlurmAsksForGpusAndMapsFourRanksPerNode) {
  test::ScratchDir scratch("gpu-slurm");
  BackendOptions options;
  options.workerProgram = "medseg-worker";
  const LaunchPlan plan = SlurmBackend(options).plan(gpuSpec(scratch), scratch / "runs" / "gpu-run");
  EXPECT_NE(plan.script.find("#SBATCH --nodes=2\n"), std::string::npos) << plan.script;
  EXPECT_NE(plan.script.find("#SBATCH --ntasks-per-node=4\n"), std::string::npos) << plan.script;
  EXPECT_NE(plan.script.find("#SBATCH --gpus-per-node=4\n"), std::string::npos) << plan.script;
  EXPECT_NE(plan.script.find("#SBATCH --gpu-bind=none\n"), std::string::npos) << plan.script;
  EXPECT_NE(plan.script.find("'mpirun' '-np' '8' '--map-by' 'ppr:4:node' 'medseg-worker'"), std::string::npos) << plan.script;
  EXPECT_EQ(plan.script.find('@'), std::string::npos) << "unfilled placeholder";
  fs::create_directories(scratch / "runs" / "gpu-run");
  writeFileAtomically(scratch / "runs" / "gpu-run" / "job.sbatch", plan.script);
  const auto syntax = runCapture({"bash", "-n", (scratch / "runs" / "gpu-run" / "job.sbatch").string()}, 20.0, true);
  EXPECT_EQ(syntax.exitCode, 0) << syntax.output;
  // Without GPUs nothing changes: no GPU directives, Open MPI's default mapping.
  RunSpec cpu = gpuSpec(scratch);
  cpu.gpusPerNode = 0;
  const LaunchPlan plain = SlurmBackend(options).plan(cpu, scratch / "runs" / "gpu-run");
  EXPECT_EQ(plain.script.find("--gpu"), std::string::npos) << plain.script;
  EXPECT_EQ(plain.script.find("--map-by"), std::string::npos) << plain.script;
}

TEST(GpuPlacementSubmit, SshMapsRanksPerNodeFromTheHostfile) {
  test::ScratchDir scratch("gpu-ssh");
  BackendOptions options;
  options.workerProgram = "medseg-worker";
  options.host = "login";
  options.hostfile = "/home/u/hosts";
  const LaunchPlan plan = SshBackend(options).plan(gpuSpec(scratch), scratch / "runs" / "gpu-run");
  EXPECT_NE(plan.remoteCommand.find("'--hostfile' '/home/u/hosts' '-np' '8' '--map-by' 'ppr:4:node'"), std::string::npos)
      << plan.remoteCommand;
}

TEST(GpuPlacementSubmit, DryRunPrintsTheRankNodeDeviceTable) {
  test::ScratchDir scratch("gpu-dry-run");
  writeFileAtomically(scratch / "train.yaml", "epochs: 1\n");
  const auto dry = test::runMedseg({"submit", "--backend", "slurm", "--ranks", "8", "--nodes", "2", "--gpus-per-node", "4",
                                    "--config", (scratch / "train.yaml").string(), "--run-dir", (scratch / "runs").string(),
                                    "--name", "eight", "--dry-run"});
  ASSERT_EQ(dry.exitCode, 0) << dry.output;
  EXPECT_NE(dry.output.find("# placement (rank -> node -> device):\n#   rank  node  local  device\n"
                            "#   0     0     0      cuda:0\n#   1     0     1      cuda:1\n#   2     0     2      cuda:2\n"
                            "#   3     0     3      cuda:3\n#   4     1     0      cuda:0\n#   5     1     1      cuda:1\n"
                            "#   6     1     2      cuda:2\n#   7     1     3      cuda:3\n"),
            std::string::npos)
      << dry.output;
  EXPECT_NE(dry.output.find("#SBATCH --gpus-per-node=4"), std::string::npos) << dry.output;
  EXPECT_FALSE(fs::exists(scratch / "runs" / "eight"));  // a dry run creates nothing

  // 3 ranks on one GPU: the table says they share it; JSON carries the same rows.
  const auto shared = test::runMedseg({"--json", "submit", "--backend", "slurm", "--ranks", "3", "--gpus-per-node", "1",
                                       "--config", (scratch / "train.yaml").string(), "--run-dir",
                                       (scratch / "runs").string(), "--name", "three", "--dry-run"});
  ASSERT_EQ(shared.exitCode, 0) << shared.output;
  const auto events = test::jsonLines(shared.output);
  ASSERT_FALSE(events.empty()) << shared.output;
  const auto& placement = events.back()["placement"];
  ASSERT_EQ(placement.size(), 3u) << shared.output;
  for (const auto& row : placement) {
    EXPECT_EQ(row["device"], "cuda:0");
    EXPECT_EQ(row["node"], 0);
    EXPECT_EQ(row["shared"], true);
  }

  // The config's device is what the ranks take; cpu needs no GPU.
  writeFileAtomically(scratch / "cpu.yaml", "epochs: 1\ndevice: cpu\n");
  const auto cpu = test::runMedseg({"submit", "--backend", "slurm", "--ranks", "2", "--gpus-per-node", "2", "--config",
                                    (scratch / "cpu.yaml").string(), "--run-dir", (scratch / "runs").string(), "--name",
                                    "cpu", "--dry-run"});
  ASSERT_EQ(cpu.exitCode, 0) << cpu.output;
  EXPECT_NE(cpu.output.find("#   1     0     1      cpu\n"), std::string::npos) << cpu.output;

  // A device no node has is refused before anything is planned.
  const auto bad = test::runMedseg({"submit", "--backend", "slurm", "--ranks", "2", "--gpus-per-node", "2", "--device",
                                    "cuda:7", "--config", (scratch / "train.yaml").string(), "--run-dir",
                                    (scratch / "runs").string(), "--name", "bad", "--dry-run"});
  EXPECT_EQ(bad.exitCode, 3) << bad.output;
  EXPECT_NE(bad.output.find("sees only 2 CUDA devices"), std::string::npos) << bad.output;
}

}  // namespace
}  // namespace medseg::cluster
