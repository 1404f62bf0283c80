#pragma once
// The outcome of a scaling study: per mode and size the measured time, speed-up and efficiency next
// to the performance model's prediction, written as CSV (spreadsheets), JSON (programs) and an SVG
// plot (people) — each file atomically. Every row says whether it was measured or only predicted
// (sizes beyond this machine), every model input whether it was measured or assumed (with its
// source), and the seed-study reference curves (SeedStudy.h) are predictions, drawn dashed.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cluster/scaling/ModelInput.h"
#include "cluster/scaling/SeedStudy.h"
#include "cluster/scaling/SeedStudySensitivity.h"

namespace medseg::cluster {

struct ScalingRow {
  std::string mode;                  // "data" | "experiment"
  int workers = 1;                   // ranks (data) or trial workers (experiment)
  double seconds = 0.0;              // per step (data) or whole search makespan (experiment)
  double computeSeconds = 0.0;       // per step, data mode
  double communicationSeconds = 0.0; // per step, data mode
  double measuredSpeedup = 1.0;
  double measuredEfficiency = 1.0;
  double predictedSpeedup = 1.0;
  double predictedEfficiency = 1.0;
  double trialOverheadShare = 0.0;   // experiment mode: (start-up + data load) / trial time, all trials
  bool measured = true;              // false: a size beyond this machine, only predicted (no measured fields)
  // This machine's ceiling for `workers` copies of the work at once (MachineCeiling); 0: not measured
  // (one worker, or a predicted size).
  double ceilingEfficiency = 0.0;
  double efficiencyVsCeiling() const { return ceilingEfficiency > 0 ? measuredEfficiency / ceilingEfficiency : 0.0; }
  // The spread behind the figures. runSeconds: every run of this size (`seconds` is the median one's).
  // The measured range: the speed-ups of every pairing of a base run with a run of this size; the
  // predicted range: the model fed with the lowest and the highest ceiling the ceiling's runs allow
  // (MachineCeiling::efficiencyRange). On a shared machine a model is judged only beyond these spreads.
  // 0: not known (one run, or no ceiling).
  std::vector<double> runSeconds;
  double measuredSpeedupLow = 0.0, measuredSpeedupHigh = 0.0;
  double predictedSpeedupLow = 0.0, predictedSpeedupHigh = 0.0;
};

struct ScalingReport {
  std::vector<ScalingRow> rows;
  nlohmann::json model = nlohmann::json::object();  // the model's inputs, for the record
  std::vector<ModelInput> inputs;                    // named, with source, measured or assumed
  std::vector<ReferenceCurve> references;            // predicted curves (seed grid, two overhead sets)
  nlohmann::json ceilings = nlohmann::json::array(); // MachineCeiling::toJson of each measured size above 1
  SeedStudySensitivity seedSensitivity;              // how far the seed reference moves with its assumptions (gpus 0: none)

  // Fills measured speed-up/efficiency of each mode relative to its smallest size. Data mode: fixed
  // per-rank batch, speed-up = workers x t(1)/t(workers); experiment mode: makespan(1)/makespan(w).
  void computeMeasuredSpeedups();
  static std::vector<std::string> csvColumns();
  // CSV: the rows (measured and predicted) and the reference curves' points (kind "predicted"), then
  // a blank line and the model's inputs (input,value,unit,kind,source).
  std::string toCsv() const;
  nlohmann::json toJson() const;
  std::string toSvg() const;
  std::string toTable() const;  // human-readable
  // Writes scaling.csv, scaling.json and scaling.svg into `folder`.
  void write(const std::filesystem::path& folder) const;
};

}  // namespace medseg::cluster
