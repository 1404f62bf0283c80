#pragma once
// Human-readable tables and CSV for segmentation metrics (the JSON form is in toJson()).
#include <string>
#include <vector>

#include "core/eval/SegmentationMetrics.h"

namespace medseg {

// One row per region: Dice, HD95 (mm, "n/a" when undefined), volumes, TP/FP/FN.
std::string caseMetricsTable(const CaseMetrics& metrics);
// Mean +- sd per region; HD95 over defined cases, with the number of undefined ones.
std::string summaryTable(const MetricsSummary& summary);
// "case,region,dice,hd95_mm,..." one row per case and region; undefined HD95 is an empty field.
std::string metricsCsv(const std::vector<CaseMetrics>& cases);

}  // namespace medseg
