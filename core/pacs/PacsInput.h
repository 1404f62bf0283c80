#pragma once
// A pacs:// or dicomweb:// input (PacsClient.h) made into one multi-channel image: the series are
// found (C-FIND / QIDO-RS), matched to the model's modalities (SeriesModalityRule.h: the model's
// series_patterns or the built-in rule, or `--series` UIDs one per modality), retrieved (C-GET /
// WADO-RS) into a scratch folder, read like any DICOM folder (missing slices refused), brought onto
// the first series' grid and stacked in the model's channel order.
#include <filesystem>
#include <string>
#include <vector>

#include "core/io/ImageIO.h"
#include "core/pacs/PacsConfig.h"
#include "core/pacs/PacsQuery.h"
#include "core/pacs/SeriesModalityRule.h"
#include "core/util/Progress.h"

namespace medseg {

struct PacsInputRequest {
  std::string uri;                       // pacs://AET@host:port[/UID] or dicomweb://host:port/ROOT[/UID]
  std::vector<std::string> modalities;   // the model's input channels, in order (may be empty: one channel)
  SeriesPatterns seriesPatterns;         // the model description's series_patterns (may be empty)
  std::vector<std::string> seriesUids;   // --series, one per modality; overrides the rule
  ReadOptions read;                      // NaN / Inf rule, memory budget
};

struct PacsInput {
  ImageVolume image;                     // channels in the modalities' order, on the first series' grid
  std::vector<PacsSeries> channels;      // the series of each channel
  std::string uid;                       // the study or series the address named (for the case id)
  std::filesystem::path referenceSeries; // retrieved folder of the first channel (a DICOM SEG's source)
};

// `scratch` receives one folder per series (channel-1, ...); the caller removes it. InputError for
// addresses, UIDs and series choices that do not fit; PacsError for failed transfers; ImageIOError
// for series that cannot be read (missing slices, several series).
PacsInput pullPacsInput(const PacsInputRequest& request, const PacsConfig& config, const std::filesystem::path& scratch,
                        Reporter& reporter);

}  // namespace medseg
