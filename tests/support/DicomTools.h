#pragma once
// DICOM test series built with the DCMTK and GDCM command-line tools (Debian's dcmtk and
// libgdcm-tools), not only with ITK: a volume is written as an int16 series (writeDicomSeries), its
// study, patient and series description set with dcmodify, and its files transcoded to another
// transfer syntax (dcmcjpeg JPEG lossless, dcmcjpls JPEG-LS, gdcmconv JPEG 2000 / RLE, dcmconv
// deflate), as a PACS would hold them.
#include <algorithm>
#include <array>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/io/ImageIO.h"
#include "support/MissingComponent.h"
#include "support/TestSupport.h"

namespace medseg::test {

inline bool haveProgram(const std::string& name) { return !findOnPath(name).empty(); }

// The tools a test series needs; empty when all are installed, else what is missing.
inline std::string missingDicomTools() {
  std::string missing;
  for (const char* tool : {"dcmodify", "dcmcjpeg", "dcmcjpls", "dcmconv", "gdcmconv", "storescu"})
    if (!haveProgram(tool)) missing += std::string(missing.empty() ? "" : ", ") + tool;
  return missing;
}

enum class TransferSyntax { ExplicitLittle, JpegLossless, JpegLs, Jpeg2000, Rle, Deflate };

inline const char* transferSyntaxUid(TransferSyntax ts) {
  switch (ts) {
    case TransferSyntax::JpegLossless: return "1.2.840.10008.1.2.4.70";
    case TransferSyntax::JpegLs: return "1.2.840.10008.1.2.4.80";
    case TransferSyntax::Jpeg2000: return "1.2.840.10008.1.2.4.90";
    case TransferSyntax::Rle: return "1.2.840.10008.1.2.5";
    case TransferSyntax::Deflate: return "1.2.840.10008.1.2.1.99";
    default: return "1.2.840.10008.1.2.1";
  }
}

inline std::vector<std::filesystem::path> filesIn(const std::filesystem::path& folder) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(folder))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

// storescu proposes uncompressed syntaxes only unless told; this option proposes `ts` (each
// series is sent in the syntax it is stored in, so the PACS keeps it compressed).
inline const char* storescuProposal(TransferSyntax ts) {
  switch (ts) {
    case TransferSyntax::JpegLossless: return "-xs";
    case TransferSyntax::JpegLs: return "-xt";
    case TransferSyntax::Jpeg2000: return "-xv";
    case TransferSyntax::Rle: return "-xr";
    case TransferSyntax::Deflate: return "-xd";
    default: return "-xe";
  }
}

inline void requireTool(const std::vector<std::string>& argv) {
  const CommandResult r = runProgram(argv);
  if (r.exitCode != 0) throw std::runtime_error(argv.front() + " failed (" + std::to_string(r.exitCode) + "): " + r.output);
}

// Transcodes every file of `folder` in place.
inline void transcodeSeries(const std::filesystem::path& folder, TransferSyntax ts) {
  for (const auto& file : filesIn(folder)) {
    const std::string in = file.string(), out = file.string() + ".new";
    switch (ts) {
      case TransferSyntax::ExplicitLittle: continue;
      case TransferSyntax::JpegLossless: requireTool({"dcmcjpeg", "+e1", in, out}); break;
      case TransferSyntax::JpegLs: requireTool({"dcmcjpls", "+el", in, out}); break;
      case TransferSyntax::Jpeg2000: requireTool({"gdcmconv", "-U", "--j2k", in, out}); break;
      case TransferSyntax::Rle: requireTool({"gdcmconv", "-U", "--rle", in, out}); break;
      case TransferSyntax::Deflate: requireTool({"dcmconv", "+td", in, out}); break;
    }
    std::filesystem::rename(out, file);
  }
}

// Writes one channel as a series of `study` (shared Study Instance UID, patient) with its own
// description and number, in the given transfer syntax.
inline void writeStudySeries(const ImageVolume& channel, const std::filesystem::path& folder, const std::string& studyUid,
                             const std::string& patientId, const std::string& description, int seriesNumber,
                             TransferSyntax ts) {
  writeDicomSeries(channel, folder);
  std::vector<std::string> argv{"dcmodify", "-nb", "-m", "(0020,000d)=" + studyUid, "-m", "(0010,0020)=" + patientId,
                                "-m", "(0010,0010)=Test^" + patientId, "-m", "(0008,103e)=" + description,
                                "-m", "(0020,0011)=" + std::to_string(seriesNumber), "-m", "(0008,0020)=20261203"};
  for (const auto& f : filesIn(folder)) argv.push_back(f.string());
  requireTool(argv);
  transcodeSeries(folder, ts);
}

// The Transfer Syntax UID of a DICOM file (dcmdump of its meta header).
inline std::string fileTransferSyntax(const std::filesystem::path& file) {
  const CommandResult r = runProgram({"dcmdump", "-Un", "-s", "+P", "0002,0010", file.string()});
  const auto open = r.output.find('['), close = r.output.find(']');
  return open == std::string::npos || close == std::string::npos ? std::string() : r.output.substr(open + 1, close - open - 1);
}

}  // namespace medseg::test
