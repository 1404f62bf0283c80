#include "core/pacs/PacsInput.h"

#include <memory>

#include "core/io/ResampleToGrid.h"
#include "core/pacs/PacsClient.h"
#include "core/pacs/SeriesModalityRule.h"
#include "core/util/Interrupt.h"
#include "core/util/Text.h"

namespace medseg {
namespace fs = std::filesystem;

namespace {
std::vector<PacsSeries> chooseSeries(const PacsAddress& address, const PacsInputRequest& request) {
  PacsClient& pacs = *address.client;
  const size_t wanted = std::max<size_t>(1, request.modalities.size());
  if (!request.seriesUids.empty()) {
    if (request.seriesUids.size() != wanted)
      throw InputError("--series was given " + std::to_string(request.seriesUids.size()) + " time(s), but the model takes " +
                       std::to_string(wanted) + " channel(s)" +
                       (request.modalities.empty() ? std::string() : " (" + joinedWithCommas(request.modalities) + ")") +
                       "; give one series UID per channel, in that order");
    std::vector<PacsSeries> chosen;
    for (const auto& uid : request.seriesUids) {
      const auto found = pacs.findSeries(uid);
      if (found.empty()) throw InputError(pacs.describe() + " has no series " + uid + " (see `medseg pacs find`)");
      chosen.push_back(found.front().series);
    }
    return chosen;
  }
  if (address.uid.empty())
    throw InputError(request.uri + " names no study or series: add /STUDY_UID or /SERIES_UID, or give --series UID once per "
                     "channel (see `medseg pacs find`)");
  const auto asSeries = pacs.findSeries(address.uid);
  if (!asSeries.empty()) {
    if (wanted != 1)
      throw InputError(request.uri + " names one series, but the model takes " + std::to_string(wanted) + " channels (" +
                       joinedWithCommas(request.modalities) + "); give the study UID (its series are matched by description) or "
                       "--series UID once per channel");
    return {asSeries.front().series};
  }
  PacsFilter filter;
  filter.studyUid = address.uid;
  const auto studies = pacs.findStudies(filter);
  if (studies.empty()) throw InputError(pacs.describe() + " has no study or series " + address.uid + " (see `medseg pacs find`)");
  if (request.modalities.empty()) {
    if (studies.front().series.size() != 1)
      throw InputError("study " + address.uid + " has " + std::to_string(studies.front().series.size()) +
                       " series and the model names no modalities; give --series UID");
    return studies.front().series;
  }
  return matchSeriesToModalities(studies.front(), request.modalities, request.seriesPatterns);
}
}  // namespace

PacsInput pullPacsInput(const PacsInputRequest& request, const PacsConfig& config, const fs::path& scratch, Reporter& reporter) {
  const PacsAddress address = openPacsAddress(request.uri, config);
  PacsInput input;
  input.channels = chooseSeries(address, request);
  input.uid = address.uid.empty() ? input.channels.front().seriesUid : address.uid;
  std::vector<ImageVolume> channels;
  for (size_t i = 0; i < input.channels.size(); ++i) {
    throwIfInterrupted("retrieve");
    const PacsSeries& series = input.channels[i];
    const std::string name = request.modalities.size() > i ? request.modalities[i] : "image";
    reporter.log("retrieving " + name + " from series " + series.seriesUid + " ('" + series.description + "', " +
                 (series.instances >= 0 ? std::to_string(series.instances) : std::string("?")) + " instances) from " +
                 address.client->describe());
    const fs::path folder = scratch / ("channel-" + std::to_string(i + 1));
    std::unique_ptr<Progress> bar;
    int64_t shown = 0;
    address.client->retrieveSeries(series.seriesUid, folder, [&](int64_t received, int64_t expected) {
      if (!bar) bar = std::make_unique<Progress>(reporter, "retrieve " + name, expected > 0 ? expected : received);
      bar->advance(received - shown);
      shown = received;
    });
    bar.reset();
    ImageVolume image = readImage(folder, request.read);
    if (image.channels != 1)
      throw ImageIOError("series " + series.seriesUid + " has " + std::to_string(image.channels) + " channels; expected one");
    if (i == 0) input.referenceSeries = folder;
    else image = resampleToGrid(image, channels.front().size, channels.front().geometry);
    channels.push_back(std::move(image));
  }
  input.image = channels.size() == 1 ? std::move(channels.front()) : stackChannels(channels);
  return input;
}

}  // namespace medseg
