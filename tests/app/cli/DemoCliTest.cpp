// `medseg demo` stopped and continued: SIGTERM during its training saves the step it came at and
// names the demo's own command to continue (not `medseg train`'s), and that command finishes the demo
// from the saved step through segmentation and report.json.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/util/AtomicFile.h"
#include "support/FaultTestSupport.h"
#include "support/SpawnedProcess.h"
#include "support/TestSupport.h"

namespace medseg {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

TEST(DemoCli, SigtermDuringTrainingNamesTheDemoCommandThatContinuesIt) {
  test::ScratchDir scratch("demo-cli");
  // The tiny test network, long enough to be stopped mid-way, a checkpoint every step.
  const fs::path config = scratch.path() / "long-tiny.yaml";
  std::string tiny = readTextFile(fs::path(MEDSEG_SOURCE_DIR) / "resources/configs/tiny-test.yaml");
  const std::string steps = "steps_per_epoch: 3";
  ASSERT_NE(tiny.find(steps), std::string::npos) << "tiny-test.yaml changed: update this test";
  tiny.replace(tiny.find(steps), steps.size(), "steps_per_epoch: 100");
  writeFileAtomically(config, tiny + "checkpoint_every_steps: 1\n");
  const fs::path out = scratch.path() / "demo";
  const std::vector<std::string> demo{MEDSEG_BINARY, "--json", "demo", "--out", out.string(), "--cases", "8",
                                      "--size", "32", "--config", config.string(), "--threads", "1"};
  test::LogFile log(scratch.path() / "demo.log");
  test::SpawnedProcess stopped(demo, log.fd());
  log.close();
  ASSERT_TRUE(stopped.waitUntil([&] { return test::checkpointStep(out / "run") >= 1; }, 120s)) << log.text();
  stopped.signal(SIGTERM);
  ASSERT_EQ(stopped.wait(), 130) << "not stopped by the signal (finished first?)\n" << log.text();
  const int64_t saved = test::checkpointStep(out / "run");
  EXPECT_NE(log.text().find("(continue with: medseg demo --resume --out " + out.string() + ")"), std::string::npos)
      << log.text();
  EXPECT_FALSE(fs::exists(out / "report.json"));

  // The named command: the demo goes on from the saved step and ends with its report.
  std::vector<std::string> resume = demo;
  resume.insert(resume.end(), {"--resume", "--max-minutes", "0.02"});  // a few more steps, then the budget ends it
  test::LogFile resumedLog(scratch.path() / "resumed.log");
  test::SpawnedProcess resumed(resume, resumedLog.fd());
  resumedLog.close();
  ASSERT_EQ(resumed.wait(), 0) << resumedLog.text();
  EXPECT_NE(resumedLog.text().find("resumed from step " + std::to_string(saved)), std::string::npos) << resumedLog.text();
  const nlohmann::json report = nlohmann::json::parse(readTextFile(out / "report.json"));
  EXPECT_FALSE(report["cases"].empty()) << report.dump();
}

}  // namespace
}  // namespace medseg
