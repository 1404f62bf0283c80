#pragma once
// `medseg dataset check`: verifies that every case of a data set can be read and trained on before
// hours of GPU time are spent finding out. Cheap header checks first (files present, sizes,
// channel counts, image/label grids agree), then, unless header-only, voxel checks (NaN/Inf, label
// values outside the declared set, empty labels). A case that cannot be read becomes a finding and
// the check goes on; the report is the same whatever the number of threads.
//
// Finding codes (stable, for scripts and the studio):
//   errors:   escape, missing-file, unreadable, channel-count, shape-mismatch, geometry-mismatch,
//             label-channels, label-values, non-finite, no-training-cases, duplicate-case
//   warnings: numTraining, numTest, empty-label, constant-channel, unused-label, train-test-overlap
// non-finite follows the rule of every image read (core/io/NonFiniteVoxels.h: the stored NIfTI payload is
// scanned, since NIfTI readers turn NaN into 0), counted here instead of refused. Escaping paths
// normally never get here: loadDataset refuses them (exit 3 in the CLI).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dataset/Dataset.h"
#include "core/util/Progress.h"

namespace medseg {

enum class Severity { Error, Warning };
const char* severityName(Severity severity);  // "error", "warning"

struct Finding {
  Severity severity = Severity::Error;
  std::string code;      // see the list above
  std::string caseId;    // empty for findings about the whole data set
  std::string message;
};

struct CheckOptions {
  bool headerOnly = false;    // skip reading voxels
  size_t maxFindings = 0;     // findings kept in the report (0: all); counts always include all
  int threads = 1;            // cases checked in parallel; 0: hardware concurrency (at most 8)
  bool includeTest = true;    // also check the unlabelled test cases
  ReadOptions read;
};

struct CaseCheck {
  std::string id;
  bool test = false;                     // from the test list (no label)
  bool headerRead = false;               // image headers could be read
  Size3 size{0, 0, 0};
  int64_t channels = 0;                  // all image files together
  Geometry geometry;
  bool hasLabelHeader = false;
  Size3 labelSize{0, 0, 0};
  uint64_t bytes = 0;                    // image and label files on disk
  bool voxelsChecked = false;
  std::vector<int64_t> nonFinite;        // per channel, when voxels were checked
  std::map<int, int64_t> labelCounts;    // label value -> voxels, when voxels were checked
  int errors = 0;
  int warnings = 0;
  const char* status() const { return errors ? "error" : warnings ? "warning" : "ok"; }
};

struct DatasetReport {
  std::filesystem::path root;
  std::string name;
  DatasetLayout layout = DatasetLayout::MSD;
  bool headerOnly = false;
  std::vector<CaseCheck> cases;          // training cases then test cases, in data-set order
  // At most CheckOptions::maxFindings (errors kept first): data-set findings, then each case's in
  // case order, then cross-case ones (unused-label).
  std::vector<Finding> findings;
  int errors = 0;                        // over all findings, kept or not
  int warnings = 0;
  size_t findingsOmitted = 0;
  double seconds = 0.0;

  bool ok() const { return errors == 0; }
  nlohmann::json to_json() const;        // everything, in the field names of the JSON-lines result
  std::string toText() const;            // table of cases and list of findings for people
};

DatasetReport checkDataset(const Dataset& dataset, const CheckOptions& options, Reporter& reporter);

}  // namespace medseg
