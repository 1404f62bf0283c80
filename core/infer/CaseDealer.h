#pragma once
// Several processes sharing the cases of one inference job (the ranks of a cluster run): before a
// case is segmented the job asks its dealer whether this process takes it, and afterwards tells it
// the case's details (the "infer-case" record: status ok with output and volumes, or failed with
// the message). Without a dealer a job segments all its cases.
#include <nlohmann/json.hpp>

#include "core/infer/InferencePlan.h"

namespace medseg {

class CaseDealer {
 public:
  virtual ~CaseDealer() = default;
  // True: this process segments the case now; false: it is done or another process has it.
  virtual bool claim(const InferenceCase& job) = 0;
  virtual void done(const InferenceCase& job, const nlohmann::json& details) = 0;
};

}  // namespace medseg
