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

TEST(ScalingReport, CsvHasDocumentedColumns) {
  const auto csv = sampleReport().toCsv();
  std::istringstream lines(csv);
  std::string header, line;
  std::getline(lines, header);
  EXPECT_EQ(header,
            "mode,workers,seconds,compute_seconds,communication_seconds,measured_speedup,measured_efficiency,"
            "predicted_speedup,predicted_efficiency,trial_overhead_share");
  int rows = 0;
  while (std::getline(lines, line)) {
    ++rows;
    EXPECT_EQ(std::count(line.begin(), line.end(), ','), 9) << line;
  }
  EXPECT_EQ(rows, 4);
  EXPECT_NE(csv.find("data,2,2.5,1.9,0.5,1.6,0.8,1.8,0.9,0"), std::string::npos) << csv;
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
