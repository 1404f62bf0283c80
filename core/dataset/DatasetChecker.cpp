#include "core/dataset/DatasetChecker.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>
#include <thread>

#include "core/io/NonFiniteVoxels.h"
#include "core/util/Cores.h"
#include "core/util/Elapsed.h"
#include "core/util/Interrupt.h"

namespace medseg {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string formatSpacing(const std::array<double, 3>& spacing) {
  std::ostringstream s;
  for (int i = 0; i < 3; ++i) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.4g", spacing[i]);
    s << (i ? "x" : "") << buffer;
  }
  return s.str();
}

std::string plural(int64_t n, const std::string& word, const std::string& words = "") {
  return std::to_string(n) + " " + (n == 1 ? word : words.empty() ? word + "s" : words);
}

// Paths in messages are relative to the data-set folder: shorter, and what dataset.json says.
std::string shown(const Dataset& dataset, const fs::path& file) {
  const fs::path relative = file.lexically_normal().lexically_relative(dataset.root.lexically_normal());
  const std::string text = relative.generic_string();
  return text.empty() || text.rfind("..", 0) == 0 ? file.string() : text;
}

// What differs between two grids, for a message: "spacing 1x1x1 vs 1x1x2.5".
std::string describeGeometryDifference(const Geometry& a, const Geometry& b) {
  // Each part compared alone, with the others equal, under Geometry::sameAs's own tolerance.
  auto differs = [&](auto member) {
    Geometry left = a;
    left.*member = b.*member;
    return !left.sameAs(a);
  };
  std::vector<std::string> parts;
  if (differs(&Geometry::spacing))
    parts.push_back("spacing " + formatSpacing(a.spacing) + " vs " + formatSpacing(b.spacing) + " mm");
  if (differs(&Geometry::origin))
    parts.push_back("origin " + formatSpacing(a.origin) + " vs " + formatSpacing(b.origin) + " mm");
  if (differs(&Geometry::direction)) parts.push_back("direction cosines differ");
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) text += (i ? ", " : "") + parts[i];
  return text.empty() ? "geometry differs" : text;
}

struct CaseResult {
  CaseCheck check;
  std::vector<Finding> findings;
};

// Checks one case; every problem becomes a finding, nothing escapes but Interrupted.
class CaseChecker {
 public:
  CaseChecker(const Dataset& dataset, const CheckOptions& options, const CaseEntry& entry, bool test)
      : dataset_(dataset), options_(options), entry_(entry) {
    result_.check.id = entry.id;
    result_.check.test = test;
  }

  CaseResult run() {
    try {
      if (!filesInside() || !filesPresent()) return finish();
      const bool imagesOk = readImageHeaders();
      const bool labelOk = !result_.check.test && readLabelHeader();
      if (!options_.headerOnly) {
        if (imagesOk) checkImageVoxels();
        if (labelOk) checkLabelVoxels();
        result_.check.voxelsChecked = imagesOk && (result_.check.test || labelOk);
      }
    } catch (const Interrupted&) {
      throw;
    } catch (const std::exception& e) {  // whatever went wrong, it is this case's finding
      add(Severity::Error, "unreadable", e.what());
    }
    return finish();
  }

 private:
  void add(Severity severity, const std::string& code, const std::string& message) {
    result_.findings.push_back({severity, code, entry_.id, message});
    (severity == Severity::Error ? result_.check.errors : result_.check.warnings) += 1;
  }

  std::vector<fs::path> files() const {
    std::vector<fs::path> all = entry_.images;
    if (!result_.check.test) all.push_back(entry_.label);
    return all;
  }

  // Nothing outside the data-set folder is read, even when a link was changed after loading.
  bool filesInside() {
    bool inside = true;
    if (entry_.images.empty()) {
      add(Severity::Error, "missing-file", "the case names no image file");
      inside = false;
    }
    if (!result_.check.test && entry_.label.empty()) {
      add(Severity::Error, "missing-file", "the training case names no label file");
      inside = false;
    }
    for (const auto& file : files()) {
      if (file.empty() || isInsideDataset(dataset_.root, file)) continue;
      add(Severity::Error, "escape", file.string() + " lies outside the data-set folder; it is not read");
      inside = false;
    }
    return inside;
  }

  bool filesPresent() {
    bool present = true;
    for (const auto& file : files()) {
      std::error_code ec;
      if (!fs::exists(file, ec)) {
        add(Severity::Error, "missing-file", shown(dataset_, file) + " does not exist");
        present = false;
        continue;
      }
      const auto bytes = fs::is_regular_file(file, ec) ? fs::file_size(file, ec) : 0;
      if (!ec) result_.check.bytes += bytes;
    }
    return present;
  }

  bool readImageHeaders() {
    CaseCheck& check = result_.check;
    std::vector<ImageHeader> headers;
    for (const auto& file : entry_.images) {
      try {
        headers.push_back(readImageHeader(file, options_.read));
      } catch (const std::exception& e) {
        add(Severity::Error, "unreadable", e.what());
      }
    }
    if (headers.size() != entry_.images.size()) return false;
    bool gridsAgree = true;
    for (size_t i = 1; i < headers.size(); ++i) {
      const std::string pair = shown(dataset_, entry_.images[i]) + " and " + shown(dataset_, entry_.images[0]);
      if (headers[i].size != headers[0].size) {
        add(Severity::Error, "shape-mismatch",
            "channel files " + pair + " differ in size: " + describeSize(headers[i].size) + " vs " +
                describeSize(headers[0].size));
        gridsAgree = false;
      } else if (!headers[i].geometry.sameAs(headers[0].geometry)) {
        add(Severity::Error, "geometry-mismatch",
            "channel files " + pair + " differ: " + describeGeometryDifference(headers[i].geometry, headers[0].geometry));
        gridsAgree = false;
      }
    }
    check.headerRead = true;
    check.size = headers[0].size;
    check.geometry = headers[0].geometry;
    for (const auto& header : headers) check.channels += header.channels;
    const auto expected = static_cast<int64_t>(dataset_.modalities.size());
    if (check.channels != expected)
      add(Severity::Error, "channel-count",
          "the image has " + plural(check.channels, "channel") + " but dataset.json names " +
              plural(expected, "modality", "modalities") + " (" + modalityList() + ")");
    return gridsAgree;
  }

  std::string modalityList() const {
    std::string text;
    for (size_t i = 0; i < dataset_.modalities.size(); ++i) text += (i ? ", " : "") + dataset_.modalities[i];
    return text;
  }

  // True when the label voxels can still be checked (one channel, same size as the image).
  bool readLabelHeader() {
    ImageHeader header;
    try {
      header = readImageHeader(entry_.label, options_.read);
    } catch (const std::exception& e) {
      add(Severity::Error, "unreadable", e.what());
      return false;
    }
    CaseCheck& check = result_.check;
    check.hasLabelHeader = true;
    check.labelSize = header.size;
    if (header.channels != 1) {
      add(Severity::Error, "label-channels",
          shown(dataset_, entry_.label) + " has " + plural(header.channels, "channel") +
              "; a label map has exactly one");
      return false;
    }
    if (!check.headerRead) return true;
    if (header.size != check.size) {
      add(Severity::Error, "shape-mismatch",
          "label " + describeSize(header.size) + " does not match image " + describeSize(check.size, check.channels));
      return false;
    }
    if (!header.geometry.sameAs(check.geometry))
      add(Severity::Error, "geometry-mismatch",
          "label and image grids differ: " + describeGeometryDifference(header.geometry, check.geometry) +
              " (label vs image); the label would not overlay the image");
    return true;
  }

  std::string channelName(int64_t c) const {
    if (static_cast<size_t>(c) < dataset_.modalities.size() &&
        result_.check.channels == static_cast<int64_t>(dataset_.modalities.size()))
      return "channel " + std::to_string(c) + " (" + dataset_.modalities[static_cast<size_t>(c)] + ")";
    return "channel " + std::to_string(c);
  }

  // NaN/Inf by the rule every read follows (core/io/NonFiniteVoxels.h), here replaced and counted
  // instead of refused, so the report lists every case that has them.
  void checkImageVoxels() {
    std::map<fs::path, std::vector<NonFiniteCount>> replaced;
    ReadOptions read = options_.read;
    read.nonFinite = NonFinitePolicy::ReplaceWithZero;
    read.onNonFiniteReplaced = [&](const fs::path& file, const NonFiniteVoxels& found) { replaced[file] = found.channels; };
    ImageVolume image;
    try {
      image = loadCaseImage(entry_, read);
    } catch (const std::bad_alloc&) {
      add(Severity::Error, "unreadable", "out of memory reading the image");
      return;
    } catch (const std::exception& e) {
      add(Severity::Error, "unreadable", e.what());
      return;
    }
    const std::vector<NonFiniteCount> nonFinite = nonFiniteByChannel(replaced, image.channels);
    CaseCheck& check = result_.check;
    check.nonFinite.assign(static_cast<size_t>(image.channels), 0);
    for (int64_t c = 0; c < image.channels; ++c) {
      const NonFiniteCount& count = nonFinite[static_cast<size_t>(c)];
      check.nonFinite[static_cast<size_t>(c)] = count.total();
      const auto range = std::minmax_element(image.channel(c), image.channel(c) + image.voxelsPerChannel());
      if (count.total() > 0)
        add(Severity::Error, "non-finite",
            channelName(c) + " has " +
                (count.nan && count.inf ? plural(count.nan, "NaN voxel") + " and " + plural(count.inf, "infinite voxel")
                 : count.nan            ? plural(count.nan, "NaN voxel")
                                        : plural(count.inf, "infinite voxel")) +
                "; fix the preprocessing (MedSeg refuses such images unless --allow-non-finite replaces them by 0)");
      else if (*range.first == *range.second)
        add(Severity::Warning, "constant-channel",
            channelName(c) + " is constant (every voxel " + std::to_string(*range.first) + "); is the sequence missing?");
    }
  }

  // The case's channels are its files' channels in order (one 4-D file, or one file per channel).
  std::vector<NonFiniteCount> nonFiniteByChannel(const std::map<fs::path, std::vector<NonFiniteCount>>& replaced,
                                                 int64_t channels) const {
    std::vector<NonFiniteCount> counts;
    const int64_t fileChannels = channels / static_cast<int64_t>(entry_.images.size());
    for (const auto& file : entry_.images) {
      const auto found = replaced.find(file);
      if (found != replaced.end() && static_cast<int64_t>(found->second.size()) == fileChannels)
        counts.insert(counts.end(), found->second.begin(), found->second.end());
      else
        counts.resize(counts.size() + static_cast<size_t>(fileChannels));
    }
    counts.resize(static_cast<size_t>(channels));
    return counts;
  }

  void checkLabelVoxels() {
    LabelVolume labels;
    try {
      labels = loadCaseLabels(entry_, options_.read);
    } catch (const std::bad_alloc&) {
      add(Severity::Error, "unreadable", "out of memory reading the label map");
      return;
    } catch (const std::exception& e) {
      add(Severity::Error, "label-values", e.what());
      return;
    }
    std::array<int64_t, 256> histogram{};
    for (uint8_t v : labels.data) ++histogram[v];
    constexpr int kListed = 8;  // a long tail of values says "intensity image", not each value
    std::string undeclared;
    int undeclaredValues = 0;
    int64_t unlistedVoxels = 0;
    for (int v = 0; v < 256; ++v) {
      if (!histogram[v]) continue;
      result_.check.labelCounts[v] = histogram[v];
      if (dataset_.labels.count(v)) continue;
      if (++undeclaredValues <= kListed)
        undeclared += (undeclared.empty() ? "" : ", ") + std::to_string(v) + " (" + plural(histogram[v], "voxel") + ")";
      else
        unlistedVoxels += histogram[v];
    }
    if (undeclaredValues > kListed)
      undeclared += " and " + std::to_string(undeclaredValues - kListed) + " more values (" +
                    plural(unlistedVoxels, "voxel") + "); is this an intensity image rather than a label map?";
    if (undeclaredValues > 0)
      add(Severity::Error, "label-values", "label values not declared in dataset.json: " + undeclared);
    if (histogram[0] == static_cast<int64_t>(labels.data.size()))
      add(Severity::Warning, "empty-label", "the label map is all background (no foreground voxel)");
  }

  CaseResult finish() { return std::move(result_); }

  const Dataset& dataset_;
  const CheckOptions& options_;
  const CaseEntry& entry_;
  CaseResult result_;
};

std::vector<Finding> datasetFindings(const Dataset& dataset) {
  std::vector<Finding> findings;
  auto add = [&](Severity severity, const std::string& code, const std::string& message) {
    findings.push_back({severity, code, "", message});
  };
  const auto training = static_cast<int>(dataset.training.size());
  if (training == 0)
    add(Severity::Error, "no-training-cases",
        "the data set has no training cases" +
            std::string(dataset.layout == DatasetLayout::NnUNetV2 ? " (no imagesTr/<case>_0000" + dataset.fileEnding + " files)"
                                                                  : " (dataset.json 'training' is empty)"));
  if (dataset.declaredNumTraining >= 0 && dataset.declaredNumTraining != training)
    add(Severity::Warning, "numTraining",
        "dataset.json says numTraining " + std::to_string(dataset.declaredNumTraining) + ", but the data set has " +
            plural(training, "training case"));
  if (dataset.declaredNumTest >= 0 && dataset.declaredNumTest != static_cast<int>(dataset.test.size()))
    add(Severity::Warning, "numTest",
        "dataset.json says numTest " + std::to_string(dataset.declaredNumTest) + ", but the data set has " +
            plural(static_cast<int64_t>(dataset.test.size()), "test case"));
  std::set<std::string> trainingIds;
  for (const auto& entry : dataset.training)
    if (!trainingIds.insert(entry.id).second)
      add(Severity::Error, "duplicate-case", "training case id '" + entry.id + "' appears more than once");
  std::set<std::string> testIds;
  for (const auto& entry : dataset.test) {
    if (!testIds.insert(entry.id).second)
      add(Severity::Error, "duplicate-case", "test case id '" + entry.id + "' appears more than once");
    if (trainingIds.count(entry.id))
      add(Severity::Warning, "train-test-overlap",
          "case '" + entry.id + "' is both a training and a test case; test results would be optimistic");
  }
  return findings;
}

// Declared labels that no case contains: a typo in dataset.json or a class the network can't learn.
std::vector<Finding> unusedLabelFindings(const Dataset& dataset, const std::vector<CaseResult>& results) {
  std::map<int, int64_t> totals;
  bool anyLabels = false;
  for (const auto& r : results) {
    if (r.check.test || !r.check.voxelsChecked) continue;
    anyLabels = true;
    for (const auto& [value, count] : r.check.labelCounts) totals[value] += count;
  }
  std::vector<Finding> findings;
  if (!anyLabels) return findings;
  for (const auto& [value, name] : dataset.labels)
    if (value != 0 && !totals.count(value))
      findings.push_back({Severity::Warning, "unused-label", "",
                          "label " + std::to_string(value) + " (" + name + ") occurs in no checked training case"});
  return findings;
}

int resolveThreads(int requested, size_t cases) {
  int threads = requested > 0 ? requested : static_cast<int>(std::min(8, usableCores()));
  return std::max(1, std::min(threads, static_cast<int>(std::max<size_t>(cases, 1))));
}

// Keeps at most `limit` findings, errors before warnings, in their original order.
std::vector<Finding> limitFindings(const std::vector<Finding>& all, size_t limit, size_t& omitted) {
  omitted = 0;
  if (limit == 0 || all.size() <= limit) return all;
  std::vector<bool> keep(all.size(), false);
  size_t kept = 0;
  for (Severity pass : {Severity::Error, Severity::Warning})
    for (size_t i = 0; i < all.size() && kept < limit; ++i)
      if (all[i].severity == pass) keep[i] = true, ++kept;
  std::vector<Finding> limited;
  for (size_t i = 0; i < all.size(); ++i)
    if (keep[i]) limited.push_back(all[i]);
  omitted = all.size() - limited.size();
  return limited;
}

// + 0.0 turns the -0.0 of flipped axes into 0.0, which readers of the JSON find less puzzling.
template <size_t N>
std::array<double, N> withoutNegativeZero(std::array<double, N> values) {
  for (double& v : values) v += 0.0;
  return values;
}

json geometryJson(const Geometry& g) {
  return {{"spacing", g.spacing},
          {"origin", withoutNegativeZero(g.origin)},
          {"direction", withoutNegativeZero(g.direction)}};
}

}  // namespace

const char* severityName(Severity severity) { return severity == Severity::Error ? "error" : "warning"; }

DatasetReport checkDataset(const Dataset& dataset, const CheckOptions& options, Reporter& reporter) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::pair<const CaseEntry*, bool>> work;
  for (const auto& entry : dataset.training) work.emplace_back(&entry, false);
  if (options.includeTest)
    for (const auto& entry : dataset.test) work.emplace_back(&entry, true);

  std::vector<CaseResult> results(work.size());
  std::atomic<size_t> next{0};
  std::mutex progressMutex;
  std::exception_ptr interrupted;
  Progress progress(reporter, "check", static_cast<int64_t>(work.size()));
  auto worker = [&] {
    for (size_t i = next++; i < work.size(); i = next++) {
      try {
        throwIfInterrupted("dataset check");
        results[i] = CaseChecker(dataset, options, *work[i].first, work[i].second).run();
      } catch (const Interrupted&) {
        std::lock_guard<std::mutex> lock(progressMutex);
        if (!interrupted) interrupted = std::current_exception();
        next = work.size();
        return;
      }
      std::lock_guard<std::mutex> lock(progressMutex);
      progress.advance(1, {{"case", results[i].check.id}, {"status", results[i].check.status()}});
    }
  };
  const int threads = resolveThreads(options.threads, work.size());
  if (threads == 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (auto& thread : pool) thread.join();
  }
  if (interrupted) std::rethrow_exception(interrupted);
  // The last advance() already drew the complete bar; finish() would draw it a second time.
  if (work.empty()) progress.finish();

  DatasetReport report;
  report.root = dataset.root;
  report.name = dataset.name;
  report.layout = dataset.layout;
  report.headerOnly = options.headerOnly;
  std::vector<Finding> all = datasetFindings(dataset);
  const auto unused = unusedLabelFindings(dataset, results);
  for (auto& result : results) {
    all.insert(all.end(), result.findings.begin(), result.findings.end());
    report.cases.push_back(std::move(result.check));
  }
  all.insert(all.end(), unused.begin(), unused.end());
  for (const auto& finding : all) (finding.severity == Severity::Error ? report.errors : report.warnings) += 1;
  report.findings = limitFindings(all, options.maxFindings, report.findingsOmitted);
  report.seconds = secondsSince(start);
  return report;
}

json DatasetReport::to_json() const {
  json casesJson = json::array();
  for (const auto& c : cases) {
    json item = {{"id", c.id},
                 {"set", c.test ? "test" : "training"},
                 {"status", c.status()},
                 {"errors", c.errors},
                 {"warnings", c.warnings},
                 {"bytes", c.bytes},
                 {"voxels_checked", c.voxelsChecked}};
    if (c.headerRead) {
      item["size"] = c.size;
      item["channels"] = c.channels;
      item["geometry"] = geometryJson(c.geometry);
    }
    if (c.hasLabelHeader) item["label_size"] = c.labelSize;
    if (!c.nonFinite.empty()) item["non_finite"] = c.nonFinite;
    if (!c.labelCounts.empty()) {
      json counts = json::object();
      for (const auto& [value, count] : c.labelCounts) counts[std::to_string(value)] = count;
      item["label_counts"] = counts;
    }
    casesJson.push_back(item);
  }
  json findingsJson = json::array();
  for (const auto& f : findings)
    findingsJson.push_back(
        {{"severity", severityName(f.severity)}, {"code", f.code}, {"case", f.caseId}, {"message", f.message}});
  return {{"root", root.string()},
          {"name", name},
          {"layout", layout == DatasetLayout::MSD ? "msd" : "nnunet-v2"},
          {"header_only", headerOnly},
          {"ok", ok()},
          {"cases_checked", cases.size()},
          {"errors", errors},
          {"warnings", warnings},
          {"findings_omitted", findingsOmitted},
          {"seconds", seconds},
          {"cases", casesJson},
          {"findings", findingsJson}};
}

std::string DatasetReport::toText() const {
  std::vector<std::array<std::string, 6>> rows{{"CASE", "SET", "SIZE", "SPACING (mm)", "LABEL", "STATUS"}};
  for (const auto& c : cases)
    rows.push_back({c.id, c.test ? "test" : "train", c.headerRead ? describeSize(c.size, c.channels) : "-",
                    c.headerRead ? formatSpacing(c.geometry.spacing) : "-",
                    c.hasLabelHeader ? describeSize(c.labelSize) : "-", c.status()});
  std::array<size_t, 6> width{};
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  std::ostringstream out;
  int trainingCount = 0;
  for (const auto& c : cases) trainingCount += c.test ? 0 : 1;
  out << "Data set \"" << name << "\" (" << layoutName(layout) << ") in " << root.string() << ": "
      << plural(trainingCount, "training case") << ", "
      << plural(static_cast<int64_t>(cases.size()) - trainingCount, "test case") << " checked"
      << (headerOnly ? " (headers only)" : "") << "\n\n";
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i)
      out << row[i] << (i + 1 < row.size() ? std::string(width[i] - row[i].size() + 2, ' ') : "");
    out << '\n';
  }
  if (!findings.empty()) {
    size_t codeWidth = 0, caseWidth = 1;
    for (const auto& f : findings) {
      codeWidth = std::max(codeWidth, f.code.size());
      caseWidth = std::max(caseWidth, f.caseId.size());
    }
    out << "\nFindings:\n";
    for (const auto& f : findings) {
      const std::string caseId = f.caseId.empty() ? "-" : f.caseId;
      const std::string severity = severityName(f.severity);
      out << "  " << severity << std::string(9 - severity.size(), ' ') << f.code
          << std::string(codeWidth - f.code.size() + 2, ' ') << caseId << std::string(caseWidth - caseId.size() + 2, ' ')
          << f.message << '\n';
    }
    if (findingsOmitted) out << "  ... " << findingsOmitted << " more (raise --max-findings to see them)\n";
  }
  out << "\n" << plural(errors, "error") << ", " << plural(warnings, "warning") << ": "
      << (ok() ? "the data set can be used for training" : "fix the errors before training") << '\n';
  return out.str();
}

}  // namespace medseg
