#include "core/eval/MetricsReport.h"

#include <cstdio>
#include <sstream>

namespace medseg {

namespace {

std::string formatted(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

std::string meanSd(const MeanSd& v, const char* format) {
  if (v.count == 0) return "n/a";
  return formatted(format, v.mean) + " ± " + formatted(format, v.sd);
}

std::string csvField(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string padded(const std::string& text, size_t width, bool left = false) {
  // Width in characters, counting the two-byte "±" once.
  size_t shown = 0;
  for (unsigned char c : text) shown += (c & 0xC0) != 0x80;
  if (shown >= width) return text;
  const std::string pad(width - shown, ' ');
  return left ? text + pad : pad + text;
}

}  // namespace

std::string caseMetricsTable(const CaseMetrics& metrics) {
  std::ostringstream out;
  out << padded("region", 16, true) << padded("Dice", 8) << padded("HD95 mm", 10) << padded("pred mL", 11)
      << padded("ref mL", 11) << padded("TP", 11) << padded("FP", 11) << padded("FN", 11) << '\n';
  for (const auto& r : metrics.regions) {
    out << padded(r.region, 16, true) << padded(formatted("%.4f", r.dice), 8)
        << padded(r.hd95Mm ? formatted("%.2f", *r.hd95Mm) : "n/a", 10) << padded(formatted("%.3f", r.predictedMl), 11)
        << padded(formatted("%.3f", r.referenceMl), 11) << padded(std::to_string(r.truePositives), 11)
        << padded(std::to_string(r.falsePositives), 11) << padded(std::to_string(r.falseNegatives), 11) << '\n';
  }
  return out.str();
}

std::string summaryTable(const MetricsSummary& summary) {
  std::ostringstream out;
  out << padded("region", 16, true) << padded("Dice", 18) << padded("HD95 mm", 18) << padded("HD95 n/a", 10)
      << padded("pred mL", 20) << padded("ref mL", 20) << '\n';
  for (const auto& r : summary.regions) {
    out << padded(r.region, 16, true) << padded(meanSd(r.dice, "%.4f"), 18) << padded(meanSd(r.hd95Mm, "%.2f"), 18)
        << padded(std::to_string(r.hd95Undefined), 10) << padded(meanSd(r.predictedMl, "%.2f"), 20)
        << padded(meanSd(r.referenceMl, "%.2f"), 20) << '\n';
  }
  return out.str();
}

std::string metricsCsv(const std::vector<CaseMetrics>& cases) {
  std::ostringstream out;
  out << "case,region,dice,hd95_mm,predicted_ml,reference_ml,true_positives,false_positives,false_negatives\n";
  for (const auto& c : cases)
    for (const auto& r : c.regions)
      out << csvField(c.caseId) << ',' << csvField(r.region) << ',' << formatted("%.6f", r.dice) << ','
          << (r.hd95Mm ? formatted("%.4f", *r.hd95Mm) : "") << ',' << formatted("%.6f", r.predictedMl) << ','
          << formatted("%.6f", r.referenceMl) << ',' << r.truePositives << ',' << r.falsePositives << ','
          << r.falseNegatives << '\n';
  return out.str();
}

}  // namespace medseg
