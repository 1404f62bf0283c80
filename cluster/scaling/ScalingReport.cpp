#include "cluster/scaling/ScalingReport.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <sstream>

#include "core/util/AtomicFile.h"

namespace medseg::cluster {
namespace {

std::string number(double value, int precision = 6) {
  std::ostringstream s;
  s << std::setprecision(precision) << value;
  return s.str();
}

std::string xmlEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// A CSV field: quoted when it holds a comma, quote or line break (sources are prose).
std::string csvField(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// Splits text at spaces into lines of at most `width` characters (SVG text does not wrap itself).
std::vector<std::string> wrapText(const std::string& text, size_t width) {
  std::vector<std::string> lines{""};
  std::istringstream words(text);
  std::string word;
  while (words >> word) {
    if (!lines.back().empty() && lines.back().size() + 1 + word.size() > width) lines.emplace_back("    ");
    lines.back() += (lines.back().empty() || lines.back() == "    " ? "" : " ") + word;
  }
  return lines;
}

// A "nice" tick step (1, 2 or 5 x 10^k) giving about `count` ticks over [0, maximum].
double tickStep(double maximum, int count) {
  const double raw = maximum / std::max(1, count);
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * power >= raw) return m * power;
  return 10.0 * power;
}

struct Series {
  std::string label, colour;
  bool dashed;
  std::vector<std::pair<double, double>> points;
};

// One line chart: x = workers, y from 0 to yMax, with axes, ticks, labels and a legend.
void drawChart(std::ostringstream& svg, double left, double top, double width, double height, const std::string& title,
               const std::string& yLabel, double xMax, double yMax, const std::vector<Series>& series) {
  const double plotLeft = left + 60, plotTop = top + 30, plotWidth = width - 80, plotHeight = height - 80;
  auto px = [&](double x) { return plotLeft + (xMax > 1 ? (x - 1) / (xMax - 1) : 0.5) * plotWidth; };
  auto py = [&](double y) { return plotTop + plotHeight - y / yMax * plotHeight; };
  svg << "<g class=\"chart\">\n";
  svg << "<text x=\"" << number(left + width / 2) << "\" y=\"" << number(top + 18)
      << "\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">" << xmlEscape(title) << "</text>\n";
  svg << "<line x1=\"" << number(plotLeft) << "\" y1=\"" << number(plotTop + plotHeight) << "\" x2=\""
      << number(plotLeft + plotWidth) << "\" y2=\"" << number(plotTop + plotHeight) << "\" stroke=\"black\"/>\n";
  svg << "<line x1=\"" << number(plotLeft) << "\" y1=\"" << number(plotTop) << "\" x2=\"" << number(plotLeft)
      << "\" y2=\"" << number(plotTop + plotHeight) << "\" stroke=\"black\"/>\n";
  const double yStep = tickStep(yMax, 5);
  for (double y = 0; y <= yMax + 1e-9; y += yStep) {
    svg << "<line x1=\"" << number(plotLeft - 4) << "\" y1=\"" << number(py(y)) << "\" x2=\"" << number(plotLeft + plotWidth)
        << "\" y2=\"" << number(py(y)) << "\" stroke=\"#dddddd\"/>\n";
    svg << "<text x=\"" << number(plotLeft - 8) << "\" y=\"" << number(py(y) + 4) << "\" text-anchor=\"end\" font-size=\"11\">"
        << number(y, 3) << "</text>\n";
  }
  const double xStep = std::max(1.0, tickStep(std::max(1.0, xMax - 1), 6));
  for (double x = 1; x <= xMax + 1e-9; x += xStep) {
    svg << "<line x1=\"" << number(px(x)) << "\" y1=\"" << number(plotTop + plotHeight) << "\" x2=\"" << number(px(x))
        << "\" y2=\"" << number(plotTop + plotHeight + 4) << "\" stroke=\"black\"/>\n";
    svg << "<text x=\"" << number(px(x)) << "\" y=\"" << number(plotTop + plotHeight + 17)
        << "\" text-anchor=\"middle\" font-size=\"11\">" << number(x, 4) << "</text>\n";
  }
  svg << "<text x=\"" << number(plotLeft + plotWidth / 2) << "\" y=\"" << number(plotTop + plotHeight + 36)
      << "\" text-anchor=\"middle\" font-size=\"12\">workers</text>\n";
  svg << "<text transform=\"translate(" << number(left + 16) << "," << number(plotTop + plotHeight / 2)
      << ") rotate(-90)\" text-anchor=\"middle\" font-size=\"12\">" << xmlEscape(yLabel) << "</text>\n";
  double legendY = plotTop + 8;
  for (const auto& s : series) {
    if (s.points.empty()) continue;
    svg << "<polyline fill=\"none\" stroke=\"" << s.colour << "\" stroke-width=\"2\""
        << (s.dashed ? " stroke-dasharray=\"6,4\"" : "") << " points=\"";
    for (size_t i = 0; i < s.points.size(); ++i)
      svg << (i ? " " : "") << number(px(s.points[i].first)) << "," << number(py(std::min(s.points[i].second, yMax)));
    svg << "\"/>\n";
    for (const auto& [x, y] : s.points)
      svg << "<circle cx=\"" << number(px(x)) << "\" cy=\"" << number(py(std::min(y, yMax))) << "\" r=\"3\" fill=\"" << s.colour
          << "\"/>\n";
    svg << "<line x1=\"" << number(plotLeft + 10) << "\" y1=\"" << number(legendY) << "\" x2=\"" << number(plotLeft + 34)
        << "\" y2=\"" << number(legendY) << "\" stroke=\"" << s.colour << "\" stroke-width=\"2\""
        << (s.dashed ? " stroke-dasharray=\"6,4\"" : "") << "/>\n";
    svg << "<text x=\"" << number(plotLeft + 40) << "\" y=\"" << number(legendY + 4) << "\" font-size=\"11\">"
        << xmlEscape(s.label) << "</text>\n";
    legendY += 16;
  }
  svg << "</g>\n";
}

// Data mode keeps the batch per rank (weak scaling): speed-up = workers x t(base) / t(workers);
// experiment mode runs a fixed search: makespan(base) / makespan(workers).
double speedupOf(const std::string& mode, int baseWorkers, double baseSeconds, int workers, double seconds) {
  const double ratio = baseSeconds / seconds;
  return mode == "data" ? ratio * workers / baseWorkers : ratio;
}

}  // namespace

void ScalingReport::computeMeasuredSpeedups() {
  std::map<std::string, const ScalingRow*> base;
  for (const auto& row : rows) {
    if (!row.measured) continue;
    auto& b = base[row.mode];
    if (!b || row.workers < b->workers) b = &row;
  }
  std::map<std::string, ScalingRow> baseCopy;
  for (const auto& [mode, row] : base) baseCopy[mode] = *row;
  for (auto& row : rows) {
    if (!row.measured || !baseCopy.count(row.mode)) continue;
    const ScalingRow& b = baseCopy[row.mode];
    if (row.seconds <= 0 || b.seconds <= 0) continue;
    row.measuredSpeedup = speedupOf(row.mode, b.workers, b.seconds, row.workers, row.seconds);
    row.measuredEfficiency = row.measuredSpeedup * b.workers / row.workers;
    if (b.runSeconds.size() * row.runSeconds.size() < 2) continue;
    row.measuredSpeedupLow = row.measuredSpeedupHigh = row.measuredSpeedup;
    for (double baseRun : b.runSeconds)
      for (double run : row.runSeconds) {
        if (baseRun <= 0 || run <= 0) continue;
        const double speedup = speedupOf(row.mode, b.workers, baseRun, row.workers, run);
        row.measuredSpeedupLow = std::min(row.measuredSpeedupLow, speedup);
        row.measuredSpeedupHigh = std::max(row.measuredSpeedupHigh, speedup);
      }
  }
}

std::vector<std::string> ScalingReport::csvColumns() {
  return {"mode", "workers", "seconds", "compute_seconds", "communication_seconds", "measured_speedup",
          "measured_efficiency", "predicted_speedup", "predicted_efficiency", "trial_overhead_share",
          "ceiling_efficiency", "efficiency_vs_ceiling", "kind"};
}

std::string ScalingReport::toCsv() const {
  std::ostringstream csv;
  const auto columns = csvColumns();
  for (size_t i = 0; i < columns.size(); ++i) csv << (i ? "," : "") << columns[i];
  csv << "\n";
  // Predicted-only rows leave the measured fields empty: a blank is not a zero.
  auto measured = [](const ScalingRow& r, double value) { return r.measured ? number(value) : std::string(); };
  for (const auto& r : rows)
    csv << r.mode << "," << r.workers << "," << measured(r, r.seconds) << "," << measured(r, r.computeSeconds) << ","
        << measured(r, r.communicationSeconds) << "," << measured(r, r.measuredSpeedup) << ","
        << measured(r, r.measuredEfficiency) << "," << number(r.predictedSpeedup) << "," << number(r.predictedEfficiency)
        << "," << measured(r, r.trialOverheadShare) << "," << (r.ceilingEfficiency > 0 ? number(r.ceilingEfficiency) : "")
        << "," << (r.ceilingEfficiency > 0 ? number(r.efficiencyVsCeiling()) : "") << ","
        << (r.measured ? "measured" : "predicted") << "\n";
  for (const auto& curve : references)
    for (const auto& p : curve.points)
      csv << curve.name << "," << p.workers << ",,,,,," << number(p.speedup) << "," << number(p.efficiency) << ",,,,predicted\n";
  if (!inputs.empty()) {
    csv << "\ninput,value,unit,kind,source\n";
    for (const auto& input : inputs)
      csv << csvField(input.name) << "," << number(input.value, 10) << "," << csvField(input.unit) << ","
          << input.kind() << "," << csvField(input.source) << "\n";
  }
  return csv.str();
}

nlohmann::json ScalingReport::toJson() const {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json row = {{"mode", r.mode},
                          {"workers", r.workers},
                          {"kind", r.measured ? "measured" : "predicted"},
                          {"predicted_speedup", r.predictedSpeedup},
                          {"predicted_efficiency", r.predictedEfficiency}};
    if (r.measured) {
      row["seconds"] = r.seconds;
      row["compute_seconds"] = r.computeSeconds;
      row["communication_seconds"] = r.communicationSeconds;
      row["measured_speedup"] = r.measuredSpeedup;
      row["measured_efficiency"] = r.measuredEfficiency;
      row["trial_overhead_share"] = r.trialOverheadShare;
      if (r.ceilingEfficiency > 0) {
        row["ceiling_efficiency"] = r.ceilingEfficiency;
        row["efficiency_vs_ceiling"] = r.efficiencyVsCeiling();
      }
      row["run_seconds"] = r.runSeconds;
      if (r.measuredSpeedupHigh > 0) row["measured_speedup_range"] = {r.measuredSpeedupLow, r.measuredSpeedupHigh};
      if (r.predictedSpeedupHigh > 0) row["predicted_speedup_range"] = {r.predictedSpeedupLow, r.predictedSpeedupHigh};
    }
    list.push_back(row);
  }
  nlohmann::json measuredInputs = nlohmann::json::array(), publishedInputs = nlohmann::json::array(),
                 assumedInputs = nlohmann::json::array();
  for (const auto& input : inputs)
    (input.measured ? measuredInputs : input.published ? publishedInputs : assumedInputs).push_back(input.toJson());
  nlohmann::json curves = nlohmann::json::array();
  for (const auto& curve : references) curves.push_back(curve.toJson());
  return {{"rows", list},
          {"model", model},
          {"measured_inputs", measuredInputs},
          {"published_inputs", publishedInputs},
          {"assumed_inputs", assumedInputs},
          {"reference", curves},
          {"machine_ceilings", ceilings},
          {"seed_study_sensitivity", seedSensitivity.gpus > 0 ? seedSensitivity.toJson() : nlohmann::json()}};
}

std::string ScalingReport::toSvg() const {
  const double chartWidth = 460, chartHeight = 340;
  double xMax = 2, speedupMax = 1;
  for (const auto& r : rows) {
    xMax = std::max<double>(xMax, r.workers);
    speedupMax = std::max({speedupMax, r.measured ? r.measuredSpeedup : 0.0, r.predictedSpeedup, static_cast<double>(r.workers)});
  }
  for (const auto& curve : references)
    for (const auto& p : curve.points) {
      xMax = std::max<double>(xMax, p.workers);
      speedupMax = std::max({speedupMax, p.speedup, static_cast<double>(p.workers)});
    }
  speedupMax *= 1.1;
  const char* colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd"};
  std::vector<Series> speedups, efficiencies;
  speedups.push_back({"ideal", "#888888", true, {{1, 1}, {xMax, xMax}}});
  std::vector<std::string> modes;
  for (const auto& r : rows)
    if (std::find(modes.begin(), modes.end(), r.mode) == modes.end()) modes.push_back(r.mode);
  for (size_t m = 0; m < modes.size(); ++m) {
    Series measured{modes[m] + " measured", colours[(2 * m) % 4], false, {}};
    Series predicted{modes[m] + " predicted", colours[(2 * m + 1) % 4], true, {}};
    Series measuredEff = measured, predictedEff = predicted;
    for (const auto& r : rows) {
      if (r.mode != modes[m]) continue;
      if (r.measured) {  // predicted-only sizes have no measured point
        measured.points.emplace_back(r.workers, r.measuredSpeedup);
        measuredEff.points.emplace_back(r.workers, r.measuredEfficiency);
      }
      predicted.points.emplace_back(r.workers, r.predictedSpeedup);
      predictedEff.points.emplace_back(r.workers, r.predictedEfficiency);
    }
    speedups.push_back(measured);
    speedups.push_back(predicted);
    efficiencies.push_back(measuredEff);
    efficiencies.push_back(predictedEff);
  }
  const char* referenceColours[] = {"#ff7f0e", "#17becf", "#8c564b", "#e377c2"};
  for (size_t c = 0; c < references.size(); ++c) {
    Series speedup{references[c].label, referenceColours[c % 4], true, {}};
    Series efficiency = speedup;
    for (const auto& p : references[c].points) {
      speedup.points.emplace_back(p.workers, p.speedup);
      efficiency.points.emplace_back(p.workers, p.efficiency);
    }
    speedups.push_back(speedup);
    efficiencies.push_back(efficiency);
  }
  // Assumed inputs listed under the charts, so the picture never travels without its assumptions.
  std::vector<std::string> notes;
  for (const auto& input : inputs)
    if (!input.measured)
      for (auto& line : wrapText("[" + input.kind() + "] " + input.name + " = " + number(input.value, 4) + (input.unit.empty() ? "" : " " + input.unit) +
                                     ": " + input.source,
                                 150))
        notes.push_back(std::move(line));
  const double notesHeight = notes.empty() ? 0.0 : 30.0 + 13.0 * notes.size();
  const double totalHeight = chartHeight + notesHeight;
  std::ostringstream svg;
  svg << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << number(2 * chartWidth) << "\" height=\"" << number(totalHeight)
      << "\" viewBox=\"0 0 " << number(2 * chartWidth) << " " << number(totalHeight) << "\" font-family=\"sans-serif\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  drawChart(svg, 0, 0, chartWidth, chartHeight, "Speed-up", "speed-up", xMax, speedupMax, speedups);
  drawChart(svg, chartWidth, 0, chartWidth, chartHeight, "Parallel efficiency", "efficiency", xMax, 1.2, efficiencies);
  if (!notes.empty()) {
    svg << "<g class=\"assumptions\">\n<text x=\"10\" y=\"" << number(chartHeight + 16)
        << "\" font-size=\"12\" font-weight=\"bold\">Model inputs not measured here (published or assumed); solid lines are "
           "measured, dashed lines predicted</text>\n";
    double y = chartHeight + 32;
    for (const auto& line : notes) {
      svg << "<text x=\"10\" y=\"" << number(y) << "\" font-size=\"10\" xml:space=\"preserve\">" << xmlEscape(line)
          << "</text>\n";
      y += 13;
    }
    svg << "</g>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

std::string ScalingReport::toTable() const {
  std::ostringstream t;
  t << std::left << std::setw(11) << "mode" << std::right << std::setw(8) << "workers" << std::setw(12) << "seconds"
    << std::setw(11) << "compute" << std::setw(11) << "comm" << std::setw(10) << "speedup" << std::setw(10) << "eff"
    << std::setw(11) << "pred.spd" << std::setw(10) << "pred.eff" << std::setw(10) << "overhead" << std::setw(9) << "ceiling"
    << std::setw(11) << "eff/ceil" << "\n";
  for (const auto& r : rows) {
    auto measured = [&](double value, int precision) { return r.measured ? number(value, precision) : std::string("-"); };
    t << std::left << std::setw(11) << r.mode << std::right << std::setw(8) << r.workers << std::setw(12) << measured(r.seconds, 4)
      << std::setw(11) << measured(r.computeSeconds, 4) << std::setw(11) << measured(r.communicationSeconds, 4) << std::setw(10)
      << measured(r.measuredSpeedup, 3) << std::setw(10) << measured(r.measuredEfficiency, 3) << std::setw(11)
      << number(r.predictedSpeedup, 3) << std::setw(10) << number(r.predictedEfficiency, 3) << std::setw(10)
      << (r.mode == "experiment" ? measured(r.trialOverheadShare, 3) : std::string("-")) << std::setw(9)
      << (r.ceilingEfficiency > 0 ? number(r.ceilingEfficiency, 3) : std::string("-")) << std::setw(11)
      << (r.ceilingEfficiency > 0 ? number(r.efficiencyVsCeiling(), 3) : std::string("-")) << "\n";
  }
  bool spreadHeader = false;
  for (const auto& r : rows) {
    if (r.measuredSpeedupHigh <= 0 && r.predictedSpeedupHigh <= 0) continue;
    if (!spreadHeader) t << "\nspread over the runs (every pairing of runs; the model fed with each ceiling its runs allow):\n";
    spreadHeader = true;
    auto range = [](double low, double high) {
      return high > 0 ? " x" + number(low, 3) + " to x" + number(high, 3) : std::string(" -");
    };
    t << "  " << r.mode << " x " << r.workers << ": measured" << range(r.measuredSpeedupLow, r.measuredSpeedupHigh)
      << ", predicted" << range(r.predictedSpeedupLow, r.predictedSpeedupHigh) << "\n";
  }
  for (const auto& c : ceilings)
    t << "\nceiling of " << c["workers"] << " copies at once on this machine (" << c["work"].get<std::string>()
      << "): alone " << number(c["alone_seconds"].get<double>(), 2) << " s, at once "
      << [&] {
           std::string list;
           for (const auto& s : c["at_once_seconds"]) list += (list.empty() ? "" : " / ") + number(s.get<double>(), 2);
           return list;
         }()
      << " s: efficiency " << number(c["efficiency"].get<double>(), 3) << (c["pinned"].get<bool>() ? ", pinned" : ", not pinned")
      << "\n";
  for (const auto& curve : references) {
    t << "\n" << curve.label << ":";
    for (const auto& p : curve.points) t << "  " << p.workers << ": x" << number(p.speedup, 3);
    t << "\n";
  }
  if (seedSensitivity.gpus > 0) t << "\n" << seedSensitivity.toTable();
  size_t assumed = 0, published = 0;
  for (const auto& input : inputs)
    if (!input.measured) ++(input.published ? published : assumed);
  if (assumed + published)
    t << "\n" << assumed << " model inputs are assumed and " << published
      << " published, not measured here: see scaling.json (assumed_inputs, published_inputs)\n";
  return t.str();
}

void ScalingReport::write(const std::filesystem::path& folder) const {
  std::filesystem::create_directories(folder);
  writeFileAtomically(folder / "scaling.csv", toCsv());
  writeFileAtomically(folder / "scaling.json", toJson().dump(2) + "\n");
  writeFileAtomically(folder / "scaling.svg", toSvg());
}

}  // namespace medseg::cluster
