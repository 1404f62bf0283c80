#pragma once
// Names and colours of the values of a label map, read from and written to the files the tools
// people already use keep beside their label maps:
//   - ITK-SNAP label descriptions: `IDX R G B A VIS MSH "LABEL"` (A 0..1), MedSeg writes <stem>.label.txt;
//   - 3D Slicer colour tables (.ctbl, or the same text as .txt): `value name R G B A` (A 0..255),
//     MedSeg writes <stem>.ctbl;
//   - index-name lists such as mricron's aal.nii.txt: `1 Precentral_L 2001` (extra columns ignored);
//   - FSL / mricron / ImageJ .lut colour maps: 768 bytes, 256 reds, 256 greens, 256 blues (colours only).
// A label map without a table gets neutral names ("label N"); BraTS names only come from a BraTS-style
// model or data set (bratsLabelTable, labelTableFromNames).
#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace medseg {

struct LabelEntry {
  std::string name;
  std::array<uint8_t, 3> rgb{0, 0, 0};
  double opacity = 1.0;  // 0..1
  bool visible = true;
};

struct LabelTable {
  std::map<int, LabelEntry> entries;  // by label value; 0 (background) is never listed
  // The entry of `value`, or a neutral one ("label N", a palette colour) when the table lacks it.
  LabelEntry entryFor(int value) const;
};

// Neutral look of a label nobody named: "label N" in a fixed palette colour.
LabelEntry neutralLabel(int value);
// BraTS / MSD brain-tumour labels: 1 edema (green), 2 non-enhancing (red), 3 enhancing (yellow).
LabelTable bratsLabelTable();
// Names by value (a data set's labels, a model's classes); BraTS colours for the BraTS names.
LabelTable labelTableFromNames(const std::map<int, std::string>& names);

// Reads a table in any of the forms above (told apart by content, .lut by size). Throws
// std::runtime_error naming the file and line for anything it cannot read.
LabelTable readLabelTable(const std::filesystem::path& path);

// The table kept beside `labelMap` (dir/aal.nii.gz): <stem>.label.txt, <stem>.ctbl, aal.nii.txt or
// <stem>.txt for names, colours from aal.nii.lut or <stem>.lut where the names file has none.
// std::nullopt when there is none.
std::optional<LabelTable> findLabelTableFor(const std::filesystem::path& labelMap);

// <stem>.label.txt (ITK-SNAP) and <stem>.ctbl (Slicer) beside a label map.
std::filesystem::path itkSnapLabelPath(const std::filesystem::path& labelMap);
std::filesystem::path slicerColorTablePath(const std::filesystem::path& labelMap);

// Written atomically; background 0 is written as "Clear Label" as ITK-SNAP does.
void writeItkSnapLabels(const LabelTable& table, const std::filesystem::path& path);
void writeSlicerColorTable(const LabelTable& table, const std::filesystem::path& path);
// Both tables beside `labelMap`, so ITK-SNAP and Slicer show its names and colours.
void writeLabelTablesBeside(const LabelTable& table, const std::filesystem::path& labelMap);

}  // namespace medseg
