#pragma once
// Slurm: writes <run>/job.sbatch from the template (packaging/slurm/medseg.sbatch.in, compiled in, or
// BackendOptions::sbatchTemplate), submits it with `sbatch --parsable`, and follows the job with
// `squeue -h -j ID -o %T` while it is queued or running and `sacct -n -P -j ID -o State` once it has
// left the queue.
#include <map>

#include "cluster/submit/Backend.h"

namespace medseg::cluster {

class SlurmBackend : public Backend {
 public:
  explicit SlurmBackend(BackendOptions options) : Backend(std::move(options)) {}
  std::string name() const override { return "slurm"; }
  void validate(const RunSpec& spec) const override;
  void preflight(const RunSpec& spec) override;
  LaunchPlan plan(const RunSpec& spec, const std::filesystem::path& runDir) const override;
  // Records the job id; the run stays queued until squeue or the worker says running, unless the
  // job already ran (a short job on an idle cluster), whose state advance() keeps.
  RunState submit(RunDirectory& run) override;
  RunState poll(RunDirectory& run) override;
  void cancel(RunDirectory& run) override;

 private:
  std::string tool(const std::string& name) const;
};

// Fills @NAME@ placeholders in one pass (inserted text is never rescanned); InputError for a
// placeholder without a value.
std::string renderTemplate(const std::string& text, const std::map<std::string, std::string>& values);
// The compiled-in packaging/slurm/medseg.sbatch.in.
const std::string& builtinSbatchTemplate();
// A Slurm job name made of [A-Za-z0-9._-] only (others become '_'), at most 64 characters.
std::string slurmJobName(const std::string& runName);
// Job id from `sbatch --parsable` output ("1234" or "1234;cluster"); InputError when there is none.
std::string parseSbatchJobId(const std::string& output);
// Slurm job state words (PENDING, RUNNING, COMPLETED, CANCELLED by 0, ...) -> our states.
RunState mapSlurmState(const std::string& slurmState);

}  // namespace medseg::cluster
