#include "core/io/LabelTable.h"
#include "core/io/TumourLabels.h"
#include "core/io/SidecarPath.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "core/util/AtomicFile.h"

namespace medseg {
namespace fs = std::filesystem;

namespace {

[[noreturn]] void refuse(const fs::path& path, int line, const std::string& what) {
  throw std::runtime_error(path.string() + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " + what +
                           "; expected an ITK-SNAP label description, a Slicer colour table, an index-name list "
                           "or a 768-byte .lut");
}

bool wholeNumber(const std::string& word, long lowest, long highest, long& value) {
  if (word.empty()) return false;
  char* end = nullptr;
  value = std::strtol(word.c_str(), &end, 10);
  return *end == '\0' && value >= lowest && value <= highest;
}

uint8_t colourByte(const fs::path& path, int line, const std::string& word) {
  long value = 0;
  if (!wholeNumber(word, 0, 255, value)) refuse(path, line, "colour component \"" + word + "\" is not 0..255");
  return static_cast<uint8_t>(value);
}

int labelValue(const fs::path& path, int line, const std::string& word) {
  long value = 0;
  if (!wholeNumber(word, 0, 255, value)) refuse(path, line, "label value \"" + word + "\" is not 0..255");
  return static_cast<int>(value);
}

// One line of an ITK-SNAP label description: IDX R G B A VIS MSH "LABEL".
void parseItkSnapLine(const fs::path& path, int number, const std::string& line, LabelTable& table) {
  const auto open = line.find('"');
  const auto close = line.rfind('"');
  if (close == open) refuse(path, number, "unterminated quoted label name");
  std::istringstream fields(line.substr(0, open));
  std::vector<std::string> words;
  for (std::string w; fields >> w;) words.push_back(w);
  if (words.size() != 7) refuse(path, number, "an ITK-SNAP line has 7 numbers before the quoted name");
  const int value = labelValue(path, number, words[0]);
  if (value == 0) return;  // "Clear Label"
  LabelEntry entry;
  entry.name = line.substr(open + 1, close - open - 1);
  for (int i = 0; i < 3; ++i) entry.rgb[static_cast<size_t>(i)] = colourByte(path, number, words[static_cast<size_t>(1 + i)]);
  entry.opacity = std::clamp(std::strtod(words[4].c_str(), nullptr), 0.0, 1.0);
  entry.visible = words[5] != "0";
  table.entries[value] = entry;
}

// A Slicer colour-table line (value name R G B A) or an index-name list line (value name [more]).
bool parsePlainLine(const fs::path& path, int number, const std::string& line, LabelTable& table) {
  std::istringstream fields(line);
  std::vector<std::string> words;
  for (std::string w; fields >> w;) words.push_back(w);
  if (words.size() < 2) refuse(path, number, "a line needs at least a label value and a name");
  const int value = labelValue(path, number, words[0]);
  long ignored = 0;
  const bool slicer = words.size() == 6 && std::all_of(words.begin() + 2, words.end(), [&](const std::string& w) {
                        return wholeNumber(w, 0, 255, ignored);
                      });
  if (value == 0) return slicer;
  LabelEntry entry = neutralLabel(value);
  entry.name = words[1];
  if (slicer) {
    for (int i = 0; i < 3; ++i) entry.rgb[static_cast<size_t>(i)] = colourByte(path, number, words[static_cast<size_t>(2 + i)]);
    entry.opacity = colourByte(path, number, words[5]) / 255.0;
  }
  table.entries[value] = entry;
  return slicer;
}

struct ParsedText {
  LabelTable table;
  bool hasColours = false;  // ITK-SNAP or Slicer, not a bare index-name list
};

ParsedText parseText(const fs::path& path, const std::string& text) {
  ParsedText parsed;
  std::istringstream lines(text);
  std::string line;
  int number = 0;
  bool plainWithoutColours = false;
  while (std::getline(lines, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    if (line.find('"') != std::string::npos) {
      parseItkSnapLine(path, number, line, parsed.table);
      parsed.hasColours = true;
    } else if (parsePlainLine(path, number, line, parsed.table)) {
      parsed.hasColours = true;
    } else {
      plainWithoutColours = true;
    }
  }
  if (parsed.table.entries.empty()) refuse(path, 0, "no label is listed");
  parsed.hasColours = parsed.hasColours && !plainWithoutColours;
  return parsed;
}

// ImageJ / FSL / mricron binary LUT: 256 reds, then greens, then blues.
std::array<std::array<uint8_t, 3>, 256> readLut(const fs::path& path) {
  const std::string bytes = readTextFile(path, 1 << 16);
  if (bytes.size() != 768) refuse(path, 0, "a .lut holds 768 bytes, this one " + std::to_string(bytes.size()));
  std::array<std::array<uint8_t, 3>, 256> colours{};
  for (size_t i = 0; i < 256; ++i)
    for (size_t c = 0; c < 3; ++c) colours[i][c] = static_cast<uint8_t>(bytes[c * 256 + i]);
  return colours;
}

bool hasExtension(const fs::path& path, const char* extension) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext == extension;
}

std::string slicerName(const std::string& name) {
  std::string out = name;
  std::replace_if(out.begin(), out.end(), [](unsigned char c) { return std::isspace(c); }, '_');
  return out.empty() ? "unnamed" : out;
}

}  // namespace

LabelEntry neutralLabel(int value) {
  // Hues far apart for the first labels (1 orange, 2 cyan, 3 magenta), so pictures tell them apart.
  static const std::array<uint8_t, 3> palette[] = {{60, 120, 250}, {250, 160, 60}, {80, 220, 220}, {220, 70, 220}, {160, 110, 250}};
  LabelEntry entry;
  entry.name = "label " + std::to_string(value);
  entry.rgb = palette[((value % 5) + 5) % 5];
  entry.opacity = 0.5;
  return entry;
}

LabelEntry LabelTable::entryFor(int value) const {
  const auto found = entries.find(value);
  return found == entries.end() ? neutralLabel(value) : found->second;
}

LabelTable bratsLabelTable() {
  LabelTable table;
  table.entries[1] = {"edema", {40, 200, 60}, 0.45, true};
  table.entries[2] = {"non-enhancing", {230, 60, 50}, 0.55, true};
  table.entries[3] = {"enhancing", {250, 220, 40}, 0.6, true};
  return table;
}

LabelTable labelTableFromNames(const std::map<int, std::string>& names) {
  // A tumour part gets its BraTS look however the data set spells it ("NCR/NET", "non-enhancing tumor").
  const LabelTable brats = bratsLabelTable();
  const std::map<TumourPart, int> bratsValueOf{
      {TumourPart::Edema, 1}, {TumourPart::NonEnhancingCore, 2}, {TumourPart::Enhancing, 3}};
  LabelTable table;
  for (const auto& [value, name] : names) {
    if (value == 0) continue;
    const auto part = tumourPartNamed(name);
    LabelEntry entry = part ? brats.entries.at(bratsValueOf.at(*part)) : neutralLabel(value);
    entry.name = name;
    table.entries[value] = entry;
  }
  return table;
}

LabelTable readLabelTable(const fs::path& path) {
  if (hasExtension(path, ".lut")) {
    const auto colours = readLut(path);
    LabelTable table;
    for (int value = 1; value < 256; ++value) {
      LabelEntry entry = neutralLabel(value);
      entry.rgb = colours[static_cast<size_t>(value)];
      table.entries[value] = entry;
    }
    return table;
  }
  return parseText(path, readTextFile(path, 4u << 20)).table;
}

fs::path itkSnapLabelPath(const fs::path& labelMap) { return sidecarPath(labelMap, ".label.txt"); }

fs::path slicerColorTablePath(const fs::path& labelMap) { return sidecarPath(labelMap, ".ctbl"); }

std::optional<LabelTable> findLabelTableFor(const fs::path& labelMap) {
  const fs::path folder = labelMap.parent_path();
  const std::string stem = withoutImageExtension(labelMap);
  std::string name = labelMap.filename().string();  // aal.nii.gz -> aal.nii (mricron's naming)
  if (hasExtension(labelMap, ".gz")) name = labelMap.stem().string();
  std::error_code ec;
  const auto exists = [&](const fs::path& p) { return fs::is_regular_file(p, ec); };
  std::optional<ParsedText> names;
  for (const fs::path& candidate : {itkSnapLabelPath(labelMap), slicerColorTablePath(labelMap), folder / (name + ".txt"),
                                    folder / (stem + ".txt")})
    if (exists(candidate)) {
      names = parseText(candidate, readTextFile(candidate, 4u << 20));
      break;
    }
  std::optional<std::array<std::array<uint8_t, 3>, 256>> colours;
  for (const fs::path& candidate : {folder / (name + ".lut"), folder / (stem + ".lut")})
    if (exists(candidate)) {
      colours = readLut(candidate);
      break;
    }
  if (!names && !colours) return std::nullopt;
  if (!names) return readLabelTable(exists(folder / (name + ".lut")) ? folder / (name + ".lut") : folder / (stem + ".lut"));
  if (colours && !names->hasColours)
    for (auto& [value, entry] : names->table.entries) entry.rgb = (*colours)[static_cast<size_t>(value)];
  return names->table;
}

void writeItkSnapLabels(const LabelTable& table, const fs::path& path) {
  std::ostringstream out;
  out << "################################################\n"
      << "# ITK-SnAP Label Description File (written by MedSeg)\n"
      << "# Columns: IDX -R- -G- -B- -A-- VIS MSH \"LABEL\"\n"
      << "################################################\n"
      << "    0     0    0    0        0  0  0    \"Clear Label\"\n";
  for (const auto& [value, entry] : table.entries) {
    char line[96];
    std::snprintf(line, sizeof line, "%5d %5d %4d %4d %8.3g %2d %2d    \"", value, entry.rgb[0], entry.rgb[1], entry.rgb[2],
                  entry.opacity, entry.visible ? 1 : 0, 1);
    std::string name = entry.name;
    std::replace(name.begin(), name.end(), '"', '\'');
    out << line << name << "\"\n";
  }
  writeFileAtomically(path, out.str());
}

void writeSlicerColorTable(const LabelTable& table, const fs::path& path) {
  std::ostringstream out;
  out << "# Color table file " << path.filename().string() << " (written by MedSeg)\n"
      << "# " << table.entries.size() + 1 << " values\n"
      << "0 Background 0 0 0 0\n";
  for (const auto& [value, entry] : table.entries)
    out << value << ' ' << slicerName(entry.name) << ' ' << int(entry.rgb[0]) << ' ' << int(entry.rgb[1]) << ' '
        << int(entry.rgb[2]) << ' ' << static_cast<int>(entry.opacity * 255.0 + 0.5) << '\n';
  writeFileAtomically(path, out.str());
}

void writeLabelTablesBeside(const LabelTable& table, const fs::path& labelMap) {
  writeItkSnapLabels(table, itkSnapLabelPath(labelMap));
  writeSlicerColorTable(table, slicerColorTablePath(labelMap));
}

}  // namespace medseg
