#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "cluster/scaling/ScalingReport.h"
#include "core/util/AtomicFile.h"
#include "support/TestSupport.h"

namespace medseg::cluster {
namespace {

ScalingReport sampleReport() {
  ScalingReport report;
  report.rows = {{"data", 1, 2.0, 1.9, 0.0, 1, 1, 1, 1},
                 {"data", 2, 2.5, 1.9, 0.5, 1, 1, 1.8, 0.9},
                 {"experiment", 1, 40.0, 0, 0, 1, 1, 1, 1},
                 {"experiment", 2, 21.0, 0, 0, 1, 1, 1.95, 0.975}};
  report.computeMeasuredSpeedups();
  return report;
}

// A minimal XML well-formedness check: balanced, properly nested tags and quoted attributes.
void expectWellFormedXml(const std::string& xml) {
  std::vector<std::string> open;
  size_t position = xml.find("<svg");
  ASSERT_NE(position, std::string::npos);
  static const std::regex tag(R"(^<(/?)([A-Za-z][A-Za-z0-9_-]*)((\s+[A-Za-z_:][A-Za-z0-9_:.-]*="[^"<]*")*)\s*(/?)>)");
  while ((position = xml.find('<', position)) != std::string::npos) {
    const size_t end = xml.find('>', position);
    ASSERT_NE(end, std::string::npos);
    const std::string text = xml.substr(position, end - position + 1);
    std::smatch match;
    ASSERT_TRUE(std::regex_match(text, match, tag)) << "malformed tag: " << text;
    const bool closing = match[1] == "/", selfClosing = match[5] == "/";
    if (closing) {
      ASSERT_FALSE(open.empty()) << text;
      EXPECT_EQ(open.back(), match[2].str());
      open.pop_back();
    } else if (!selfClosing) {
      open.push_back(match[2]);
    }
    position = end + 1;
  }
  EXPECT_TRUE(open.empty());
}

TEST(ScalingReport, MeasuredSpeedupsPerMode) {
  const auto report = sampleReport();
  EXPECT_DOUBLE_EQ(report.rows[1].measuredEfficiency, 0.8);
  EXPECT_DOUBLE_EQ(report.rows[1].measuredSpeedup, 1.6);
  EXPECT_NEAR(report.rows[3].measuredSpeedup, 40.0 / 21.0, 1e-12);
  EXPECT_NEAR(report.rows[3].measuredEfficiency, 20.0 / 21.0, 1e-12);
}

TEST(ScalingReport, RangesSpanEveryPairingOfRunsAndAreReported) {
  ScalingReport report;
  report.rows = {{"data", 1, 2.0, 2.0, 0.0, 1, 1, 1, 1}, {"data", 2, 2.5, 2.0, 0.5, 1, 1, 1.8, 0.9}};
  report.rows[0].runSeconds = {1.8, 2.0, 2.4};
  report.rows[1].runSeconds = {2.5, 2.2, 3.0};
  report.rows[1].predictedSpeedupLow = 1.5;
  report.rows[1].predictedSpeedupHigh = 1.9;
  report.computeMeasuredSpeedups();
  const ScalingRow& two = report.rows[1];
  EXPECT_DOUBLE_EQ(two.measuredSpeedup, 1.6);             // the median runs: 2 x 2.0 / 2.5
  EXPECT_DOUBLE_EQ(two.measuredSpeedupLow, 2 * 1.8 / 3.0);  // fastest 1-rank run against the slowest 2-rank one
  EXPECT_DOUBLE_EQ(two.measuredSpeedupHigh, 2 * 2.4 / 2.2);
  EXPECT_DOUBLE_EQ(report.rows[0].measuredSpeedupHigh, 2.4 / 1.8) << "the base against its own runs";
  const auto json = report.toJson()["rows"][1];
  EXPECT_EQ(json["run_seconds"], nlohmann::json({2.5, 2.2, 3.0}));
  EXPECT_EQ(json["measured_speedup_range"], nlohmann::json({2 * 1.8 / 3.0, 2 * 2.4 / 2.2}));
  EXPECT_EQ(json["predicted_speedup_range"], nlohmann::json({1.5, 1.9}));
  EXPECT_NE(report.toTable().find("data x 2: measured x1.2 to x2.18, predicted x1.5 to x1.9"), std::string::npos)
      << report.toTable();
  ScalingReport oneRunEach = sampleReport();
  EXPECT_FALSE(oneRunEach.toJson()["rows"][1].contains("measured_speedup_range")) << "one run has no spread";
}

TEST(ScalingReport, CsvHasDocumentedColumns) {
  const auto csv = sampleReport().toCsv();
  std::istringstream lines(csv);
  std::string header, line;
  std::getline(lines, header);
  EXPECT_EQ(header,
            "mode,workers,seconds,compute_seconds,communication_seconds,measured_speedup,measured_efficiency,"
            "predicted_speedup,predicted_efficiency,trial_overhead_share,ceiling_efficiency,efficiency_vs_ceiling,kind");
  int rows = 0;
  while (std::getline(lines, line)) {
    ++rows;
    EXPECT_EQ(std::count(line.begin(), line.end(), ','), 12) << line;
  }
  EXPECT_EQ(rows, 4);
  EXPECT_NE(csv.find("data,2,2.5,1.9,0.5,1.6,0.8,1.8,0.9,0,,,measured"), std::string::npos) << csv;
}

TEST(ScalingReport, EfficiencyIsAlsoJudgedAgainstTheMachinesCeiling) {
  auto report = sampleReport();
  report.rows[3].ceilingEfficiency = 0.8;  // 2 copies at once keep 80 % of their speed alone
  report.ceilings.push_back({{"mode", "experiment"}, {"workers", 2}, {"work", "a trial"}, {"alone_seconds", 4.0},
                             {"at_once_seconds", {4.8, 5.2}}, {"pinned", true}, {"efficiency", 0.8}});
  EXPECT_NEAR(report.rows[3].efficiencyVsCeiling(), (20.0 / 21.0) / 0.8, 1e-12);
  EXPECT_EQ(report.rows[1].efficiencyVsCeiling(), 0.0) << "no ceiling measured for that row";
  const auto json = report.toJson();
  EXPECT_NEAR(json["rows"][3]["efficiency_vs_ceiling"].get<double>(), (20.0 / 21.0) / 0.8, 1e-12);
  EXPECT_FALSE(json["rows"][1].contains("ceiling_efficiency"));
  EXPECT_EQ(json["machine_ceilings"].size(), 1u);
  const std::string table = report.toTable();
  EXPECT_NE(table.find("ceiling of 2 copies at once on this machine (a trial): alone 4 s, at once 4.8 / 5.2 s: efficiency 0.8, pinned"),
            std::string::npos)
      << table;
  EXPECT_NE(report.toCsv().find("experiment,2,21,0,0,1.90476,0.952381,1.95,0.975,0,0.8,1.19048,measured"), std::string::npos)
      << report.toCsv();
}

TEST(ScalingReport, SvgIsWellFormedWithAxesAndLegend) {
  const auto svg = sampleReport().toSvg();
  expectWellFormedXml(svg);
  EXPECT_NE(svg.find("xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_NE(svg.find(">data measured<"), std::string::npos);
  EXPECT_NE(svg.find(">data predicted<"), std::string::npos);
  EXPECT_NE(svg.find(">experiment measured<"), std::string::npos);
  EXPECT_NE(svg.find(">workers<"), std::string::npos);
  EXPECT_NE(svg.find(">efficiency<"), std::string::npos);
  size_t polylines = 0;
  for (size_t p = svg.find("<polyline"); p != std::string::npos; p = svg.find("<polyline", p + 1)) ++polylines;
  EXPECT_EQ(polylines, 1u + 4u + 4u);  // ideal + (measured, predicted) x 2 modes, in 2 charts
}

// A report with a size beyond the machine, model inputs of both kinds and the seed-study references.
ScalingReport reportWithPredictions() {
  ScalingReport report = sampleReport();
  ScalingRow beyond;
  beyond.mode = "data";
  beyond.workers = 8;
  beyond.measured = false;
  beyond.predictedSpeedup = 6.5;
  beyond.predictedEfficiency = 6.5 / 8;
  report.rows.push_back(beyond);
  report.computeMeasuredSpeedups();
  report.inputs.push_back({"this_machine.bytes_per_second", 4e9, "B/s", "measured: MPI_Allreduce, 2 ranks", true});
  for (const auto& input : infinibandEdrAssumption().inputs()) report.inputs.push_back(input);
  report.references = seedStudyReferences(SeedStudyInputs{}, MedsegOverheads{});
  return report;
}

TEST(ScalingReport, PredictedRowsAndAssumptionsAreLabelledApartFromMeasurements) {
  const auto report = reportWithPredictions();
  EXPECT_DOUBLE_EQ(report.rows[1].measuredSpeedup, 1.6) << "a predicted row is no base for measured speed-ups";
  const auto json = report.toJson();
  const auto& predicted = json["rows"][4];
  EXPECT_EQ(predicted["kind"], "predicted");
  EXPECT_FALSE(predicted.contains("measured_speedup")) << "nothing measured at a size beyond the machine";
  EXPECT_FALSE(predicted.contains("seconds"));
  EXPECT_EQ(json["rows"][0]["kind"], "measured");
  ASSERT_EQ(json["measured_inputs"].size(), 1u);
  EXPECT_EQ(json["measured_inputs"][0]["kind"], "measured");
  ASSERT_EQ(json["assumed_inputs"].size(), 2u);
  EXPECT_NE(json["assumed_inputs"][0]["source"].get<std::string>().find("InfiniBand"), std::string::npos);
  ASSERT_EQ(json["reference"].size(), 2u);
  EXPECT_EQ(json["reference"][0]["name"], "seed_overheads");
  EXPECT_EQ(json["reference"][1]["name"], "medseg_overheads");
  EXPECT_EQ(json["reference"][0]["kind"], "predicted");
  EXPECT_EQ(json["reference"][1]["points"].back()["workers"], 32);

  const auto csv = report.toCsv();
  EXPECT_NE(csv.find("\ndata,8,,,,,,6.5,0.8125,,,,predicted\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\nseed_overheads,32,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\ninput,value,unit,kind,source\n"), std::string::npos);
  EXPECT_NE(csv.find("this_machine.bytes_per_second,4000000000,B/s,measured,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("inter_node.alpha_seconds,1.5e-06,s,assumed,\"assumed: InfiniBand EDR"), std::string::npos) << csv;

  const auto svg = report.toSvg();
  expectWellFormedXml(svg);
  EXPECT_NE(svg.find(">seed grid, seed overheads (predicted)<"), std::string::npos);
  EXPECT_NE(svg.find(">seed grid, MedSeg overheads (predicted)<"), std::string::npos);
  EXPECT_NE(svg.find("Model inputs not measured here (published or assumed)"), std::string::npos);
  EXPECT_NE(svg.find("inter_node.bytes_per_second = 1.2e+10 B/s: assumed: InfiniBand"), std::string::npos);
  EXPECT_EQ(svg.find("this_machine.bytes_per_second ="), std::string::npos) << "measured inputs are not listed as assumptions";
  size_t polylines = 0;
  for (size_t p = svg.find("<polyline"); p != std::string::npos; p = svg.find("<polyline", p + 1)) ++polylines;
  EXPECT_EQ(polylines, 1u + 4u + 4u + 2u * 2u);  // ... + 2 reference curves in both charts
}

TEST(ScalingReport, WritesAllThreeFiles) {
  test::ScratchDir scratch("scaling-report");
  sampleReport().write(scratch / "out");
  for (const char* name : {"scaling.csv", "scaling.json", "scaling.svg"})
    EXPECT_TRUE(std::filesystem::is_regular_file(scratch / "out" / name)) << name;
  const auto json = nlohmann::json::parse(readTextFile(scratch / "out" / "scaling.json"));
  EXPECT_EQ(json["rows"].size(), 4u);
  EXPECT_EQ(json["rows"][1]["workers"], 2);
}

}  // namespace
}  // namespace medseg::cluster
