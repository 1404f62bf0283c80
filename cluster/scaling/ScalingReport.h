#pragma once
// The outcome of a scaling study: per mode and size the measured time, speed-up and efficiency next
// to the performance model's prediction, written as CSV (spreadsheets), JSON (programs) and an SVG
// plot (people) — each file atomically.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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
};

struct ScalingReport {
  std::vector<ScalingRow> rows;
  nlohmann::json model = nlohmann::json::object();  // the model's inputs, for the record

  // Fills measured speed-up/efficiency of each mode relative to its smallest size. Data mode: fixed
  // per-rank batch, speed-up = workers x t(1)/t(workers); experiment mode: makespan(1)/makespan(w).
  void computeMeasuredSpeedups();
  static std::vector<std::string> csvColumns();
  std::string toCsv() const;
  nlohmann::json toJson() const;
  std::string toSvg() const;
  std::string toTable() const;  // human-readable
  // Writes scaling.csv, scaling.json and scaling.svg into `folder`.
  void write(const std::filesystem::path& folder) const;
};

}  // namespace medseg::cluster
