#include "core/pacs/DicomWebClient.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>

#include "core/pacs/DicomFileHeader.h"
#include "core/pacs/HttpSession.h"
#include "core/pacs/MultipartReader.h"
#include "core/pacs/PacsError.h"
#include "core/pacs/StagedSeriesFolder.h"
#include "core/util/Elapsed.h"
#include "core/util/Interrupt.h"

namespace medseg {
namespace fs = std::filesystem;
using nlohmann::json;
using pacs_detail::HttpResponse;
using pacs_detail::HttpSession;
using pacs_detail::HttpTransportError;
using pacs_detail::urlEncode;

namespace {
// DICOM JSON keys (PS3.18 F.2): tags as 8 upper-case hex digits.
const char* const kStudyUid = "0020000D";
const char* const kSeriesUid = "0020000E";
const char* const kPatientId = "00100020";
const char* const kPatientName = "00100010";
const char* const kStudyDate = "00080020";
const char* const kStudyDescription = "00081030";
const char* const kModality = "00080060";
const char* const kSeriesDescription = "0008103E";
const char* const kSeriesNumber = "00200011";
const char* const kSeriesInstances = "00201209";
const char* const kFailedSops = "00081198";
const char* const kFailureReason = "00081197";
const char* const kReferencedSopInstance = "00081155";

const char* const kDicomJson = "application/dicom+json, application/json";
const char* const kSeriesAsStored = "multipart/related; type=\"application/dicom\"; transfer-syntax=*";
const char* const kSeriesDefault = "multipart/related; type=\"application/dicom\"";

// The first value of a DICOM JSON attribute as text: strings as they are, numbers (IS, DS, US
// may come as JSON numbers) in decimal, person names by their alphabetic form.
std::string firstValue(const json& object, const char* tag) {
  if (!object.is_object() || !object.contains(tag)) return {};
  const json& attribute = object.at(tag);
  if (!attribute.is_object() || !attribute.contains("Value") || !attribute.at("Value").is_array() ||
      attribute.at("Value").empty())
    return {};
  const json& value = attribute.at("Value").front();
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_integer()) return std::to_string(value.get<int64_t>());
  if (value.is_number()) return value.dump();
  if (value.is_object() && value.contains("Alphabetic") && value.at("Alphabetic").is_string())
    return value.at("Alphabetic").get<std::string>();
  return {};
}

// A QIDO-RS answer's attributes by tag (DICOM JSON keys are the tag in 8 upper-case hex digits).
AttributeText attributesOf(const json& d) {
  return [&d](uint32_t tag) {
    char key[9];
    std::snprintf(key, sizeof key, "%08X", static_cast<unsigned>(tag));
    return firstValue(d, key);
  };
}

PacsStudy studyFrom(const json& d) { return studyFromAttributes(attributesOf(d)); }
PacsSeries seriesFrom(const json& d) { return seriesFromAttributes(attributesOf(d)); }

std::string includeFields(std::initializer_list<const char*> tags) {
  std::string out;
  for (const char* tag : tags) out += std::string("&includefield=") + tag;
  return out;
}

std::string reasonPhrase(long status) {
  switch (status) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 406: return "Not Acceptable";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 415: return "Unsupported Media Type";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    default: return "";
  }
}

// What the server said about an error, in one line: its JSON "Details"/"Message" (Orthanc) or
// the start of its text.
std::string serverSays(const std::string& body) {
  if (body.empty()) return {};
  try {
    const json j = json::parse(body);
    for (const char* key : {"Details", "Message", "message", "error"})
      if (j.is_object() && j.contains(key) && j.at(key).is_string() && !j.at(key).get<std::string>().empty())
        return j.at(key).get<std::string>();
    return {};  // JSON without a message (DICOM JSON of a STOW-RS answer): the status says it
  } catch (const json::exception&) {
  }
  std::string text = body.substr(0, 200);
  for (char& c : text)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return text + (body.size() > 200 ? "..." : "");
}

std::string statusText(long status) {
  const std::string phrase = reasonPhrase(status);
  return "HTTP " + std::to_string(status) + (phrase.empty() ? "" : " " + phrase);
}

std::string randomBoundary() {
  std::random_device device;
  std::mt19937_64 generator(device() ^ uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()));
  static const char hex[] = "0123456789abcdef";
  std::string boundary = "medseg-";
  for (int i = 0; i < 32; ++i) boundary += hex[generator() % 16];
  return boundary;
}

std::string readBinary(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError("cannot read " + file.string());
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Writes one multipart part (one DICOM instance) into the staging folder as it streams in.
class PartWriter {
 public:
  explicit PartWriter(fs::path folder) : folder_(std::move(folder)) {}
  void begin(const std::map<std::string, std::string>& headers) {
    if (const auto type = headers.find("content-type"); type != headers.end()) {
      std::string lowered = type->second;
      for (char& c : lowered) c = char(std::tolower(static_cast<unsigned char>(c)));
      if (lowered.rfind("application/dicom", 0) != 0 || lowered.rfind("application/dicom+", 0) == 0)
        throw PacsError("the answer holds a part of type '" + type->second + "' where DICOM files (application/dicom) belong");
    }
    char name[32];
    std::snprintf(name, sizeof name, "%06lld.dcm", static_cast<long long>(written_ + 1));
    path_ = folder_ / name;
    out_.open(path_, std::ios::binary | std::ios::trunc);
    if (!out_) throw std::runtime_error("cannot write " + path_.string() + ": " + std::strerror(errno));
    head_.clear();
  }
  void data(const char* bytes, size_t size) {
    if (head_.size() < 132) head_.append(bytes, std::min(size, 132 - head_.size()));
    out_.write(bytes, std::streamsize(size));
    if (!out_) throw std::runtime_error("cannot write " + path_.string() + ": " + std::strerror(errno));
  }
  void end() {
    out_.close();
    if (!out_) throw std::runtime_error("cannot write " + path_.string() + ": " + std::strerror(errno));
    if (head_.size() < 132 || head_.compare(128, 4, "DICM") != 0)
      throw PacsError("part " + std::to_string(written_ + 1) + " of the answer is not a DICOM file (no 'DICM' after the "
                      "128-byte preamble)");
    ++written_;
  }
  int64_t written() const { return written_; }

 private:
  fs::path folder_;
  fs::path path_;
  std::ofstream out_;
  std::string head_;
  int64_t written_ = 0;
};
}  // namespace

DicomWebClient::DicomWebClient(DicomWebServer server, PacsConfig config)
    : server_(std::move(server)), config_(std::move(config)) {}

DicomWebClient::~DicomWebClient() = default;

HttpSession& DicomWebClient::session() {
  if (!session_) session_ = std::make_unique<HttpSession>(config_, server_.describe());
  return *session_;
}

void DicomWebClient::checkStatus(const HttpResponse& response, const std::string& url, const std::string& what) const {
  const long status = response.status;
  if (status >= 200 && status < 300) return;
  const std::string says = serverSays(response.body);
  const std::string detail = says.empty() ? std::string() : ": " + says;
  const std::string head = server_.describe() + " answered " + what + " with " + statusText(status) + detail;
  if (status == 404)
    throw InputError(head + " (" + server_.describe() + url.substr(server_.root.size()) +
                     "); check the DICOMweb root (e.g. http://host:8042/dicom-web for Orthanc) and the UID");
  if (status == 401 || status == 403)
    throw InputError(head + "; the server wants credentials MedSeg did not send (give them in the address: "
                     "http://user:password@host/...) or refuses this client");
  if (status >= 500) throw PacsError(head + " (a failure on the server's side)");
  throw PacsError(head);
}

json DicomWebClient::query(const std::string& pathAndQuery, const std::string& what) {
  throwIfInterrupted("QIDO-RS");
  const std::string url = server_.root + pathAndQuery;
  const HttpResponse response = session().get(url, kDicomJson);
  checkStatus(response, url, what);
  if (response.status == 204 || response.body.empty()) return json::array();  // no matches
  json answer;
  try {
    answer = json::parse(response.body);
  } catch (const json::exception&) {
    throw PacsError(server_.describe() + " answered " + what + " with something that is not DICOM JSON (Content-Type '" +
                    response.contentType + "': " + serverSays(response.body) + "); is " + server_.describe() +
                    " the DICOMweb root?");
  }
  if (!answer.is_array())
    throw PacsError(server_.describe() + " answered " + what + " with JSON that is not a list of DICOM JSON objects; is " +
                    server_.describe() + " the DICOMweb root?");
  return answer;
}

std::string DicomWebClient::echo() {
  query("/studies?limit=1", "QIDO-RS /studies");
  return "QIDO-RS";
}

std::vector<PacsSeries> DicomWebClient::seriesOf(const std::string& studyUid, const std::string& modality) {
  std::string path = "/studies/" + urlEncode(studyUid) + "/series?" +
                     includeFields({kModality, kSeriesDescription, kSeriesNumber, kSeriesInstances}).substr(1);
  if (!modality.empty()) path += "&Modality=" + urlEncode(modality);
  std::vector<PacsSeries> out;
  for (const json& entry : query(path, "QIDO-RS /studies/" + studyUid + "/series")) {
    PacsSeries series = seriesFrom(entry);
    if (!series.seriesUid.empty()) out.push_back(std::move(series));
  }
  return out;
}

std::vector<PacsStudy> DicomWebClient::findStudies(const PacsFilter& filter) {
  std::string path = "/studies?" + includeFields({kPatientId, kPatientName, kStudyDate, kStudyDescription}).substr(1);
  if (!filter.patientId.empty()) path += "&PatientID=" + urlEncode(filter.patientId);
  if (!filter.studyUid.empty()) path += "&StudyInstanceUID=" + urlEncode(filter.studyUid);
  std::vector<PacsStudy> studies;
  for (const json& entry : query(path, "QIDO-RS /studies")) {
    throwIfInterrupted("QIDO-RS");
    PacsStudy study = studyFrom(entry);
    if (study.studyUid.empty()) continue;
    if (!filter.studyUid.empty() && study.studyUid != filter.studyUid) continue;
    study.series = seriesOf(study.studyUid, filter.modality);
    if (!filter.modality.empty() && study.series.empty()) continue;
    studies.push_back(std::move(study));
  }
  return studies;
}

std::vector<FoundSeries> DicomWebClient::findSeries(const std::string& seriesUid) {
  const std::string path = "/series?SeriesInstanceUID=" + urlEncode(seriesUid) +
                           includeFields({kStudyUid, kModality, kSeriesDescription, kSeriesNumber, kSeriesInstances});
  std::vector<FoundSeries> found;
  for (const json& entry : query(path, "QIDO-RS /series")) {
    FoundSeries one;
    one.series = seriesFrom(entry);
    if (one.series.seriesUid != seriesUid) continue;
    one.study.studyUid = firstValue(entry, kStudyUid);
    one.study.series = {one.series};
    found.push_back(std::move(one));
  }
  return found;
}

RetrieveResult DicomWebClient::retrieveSeries(const std::string& seriesUid, const fs::path& requested,
                                              const RetrieveProgress& progress) {
  const auto start = std::chrono::steady_clock::now();
  StagedSeriesFolder staged(requested);  // refuses a non-empty target before anything is asked
  const std::vector<FoundSeries> found = findSeries(seriesUid);
  if (found.empty()) throw InputError(server_.describe() + " has no series " + seriesUid + " (see `medseg pacs find`)");
  const int64_t expected = found.front().series.instances;
  const std::string studyUid = found.front().study.studyUid;
  if (studyUid.empty())
    throw PacsError(server_.describe() + " did not say which study series " + seriesUid +
                    " belongs to (QIDO-RS gave no StudyInstanceUID), so WADO-RS cannot address it");
  const std::string url = server_.root + "/studies/" + urlEncode(studyUid) + "/series/" + urlEncode(seriesUid);
  const std::string what = "WADO-RS of series " + seriesUid;

  std::unique_ptr<PartWriter> writer;
  std::unique_ptr<MultipartReader> reader;
  auto attempt = [&](const char* accept) {
    writer = std::make_unique<PartWriter>(staged.staging());
    reader.reset();
    for (const auto& e : fs::directory_iterator(staged.staging())) fs::remove(e.path());
    return session().getStreamed(
        url, accept,
        [&](long, const std::string& contentType) {
          const std::string boundary = multipartBoundary(contentType);
          if (boundary.empty())
            throw PacsError(server_.describe() + " answered " + what + " with Content-Type '" + contentType +
                            "', not multipart/related DICOM files");
          MultipartReader::Handler handler;
          handler.begin = [&](const std::map<std::string, std::string>& headers) { writer->begin(headers); };
          handler.data = [&](const char* data, size_t size) { writer->data(data, size); };
          handler.end = [&] {
            writer->end();
            if (progress) progress(writer->written(), expected);
          };
          reader = std::make_unique<MultipartReader>(boundary, handler);
        },
        [&](const char* data, size_t size) { reader->feed(data, size); });
  };
  auto countText = [&] {
    return std::to_string(writer ? writer->written() : 0) + " of " +
           (expected >= 0 ? std::to_string(expected) : std::string("?")) + " instances";
  };
  HttpResponse response;
  try {
    response = attempt(kSeriesAsStored);
    if ((response.status == 406 || response.status == 400) && !reader)
      response = attempt(kSeriesDefault);  // a server that cannot send "as stored" transcodes instead
  } catch (const HttpTransportError& e) {
    if (e.connectFailed()) throw;
    throw PacsError("retrieve of series " + seriesUid + " from " + server_.describe() + " was cut off after " + countText() +
                    ": " + e.what() + "; nothing was kept");
  } catch (const PacsError& e) {
    throw PacsError("retrieve of series " + seriesUid + " from " + server_.describe() + " failed after " + countText() +
                    ": " + e.what() + "; nothing was kept");
  }
  throwIfInterrupted("retrieve");
  checkStatus(response, url, what);
  if (!reader)
    throw PacsError(server_.describe() + " answered " + what + " with an empty body; nothing was kept");
  if (!reader->complete())
    throw PacsError("retrieve of series " + seriesUid + " from " + server_.describe() + " was cut off after " + countText() +
                    ": the answer ended before its closing boundary; nothing was kept");
  if (writer->written() == 0 || (expected >= 0 && writer->written() != expected))
    throw PacsError("retrieve of series " + seriesUid + " from " + server_.describe() + " delivered " + countText() +
                    "; nothing was kept");
  staged.commit();
  RetrieveResult result;
  result.folder = staged.target();
  result.instances = writer->written();
  result.seconds = secondsSince(start);
  return result;
}

std::vector<StoredInstance> DicomWebClient::store(const std::vector<fs::path>& files, const StoreProgress& progress) {
  if (files.empty()) throw InputError("no files to store");
  std::vector<DicomFileHeader> headers;
  for (const auto& file : files) {
    headers.push_back(readDicomFileHeader(file));
    if (!headers.back().part10)
      throw InputError(file.string() + ": not a DICOM Part 10 file (no 'DICM' after the 128-byte preamble); STOW-RS sends "
                       "files as they are: convert it first (dcmconv +F IN OUT)");
  }
  const std::string url = server_.root + "/studies";
  std::vector<StoredInstance> stored;
  for (size_t i = 0; i < files.size(); ++i) {
    throwIfInterrupted("store");
    const std::string content = readBinary(files[i]);
    std::string boundary = randomBoundary();
    while (content.find(boundary) != std::string::npos) boundary = randomBoundary();
    std::string body = "--" + boundary + "\r\nContent-Type: application/dicom\r\n\r\n";
    body += content;
    body += "\r\n--" + boundary + "--\r\n";
    const std::string what = "STOW-RS of " + files[i].string();
    const HttpResponse response = session().post(
        url, "multipart/related; type=\"application/dicom\"; boundary=" + boundary, kDicomJson, body);
    // 200: stored; 202: stored with warnings, or some refused; 409: refused. The answer's
    // FailedSOPSequence says which instance and why (a DICOM status such as 0xA700, 0xC000).
    json answer;
    try {
      if (!response.body.empty()) answer = json::parse(response.body);
    } catch (const json::exception&) {
    }
    std::string failure;
    if (answer.is_object() && answer.contains(kFailedSops) && answer[kFailedSops].contains("Value"))
      for (const json& item : answer[kFailedSops]["Value"]) {
        const std::string instance = firstValue(item, kReferencedSopInstance);
        if (!instance.empty() && instance != headers[i].sopInstanceUid) continue;
        const std::string reason = firstValue(item, kFailureReason);
        char hex[16] = "";
        if (!reason.empty()) std::snprintf(hex, sizeof hex, "0x%04x", unsigned(std::stoul(reason)));
        failure = reason.empty() ? std::string("no reason given") : std::string("failure reason ") + hex;
      }
    const long status = response.status;
    if (status == 404 || status == 401 || status == 403) checkStatus(response, url, what);  // address or credentials
    if (status < 200 || status >= 300 || !failure.empty()) {
      const std::string says = serverSays(response.body);
      throw PacsError(server_.describe() + " refused " + files[i].string() + " (STOW-RS answered " + statusText(status) +
                      (failure.empty() ? std::string() : ", " + failure) + (says.empty() ? std::string() : ": " + says) +
                      ")" + (i > 0 ? "; the " + std::to_string(i) + " file(s) before it were stored" : std::string()));
    }
    stored.push_back({files[i], headers[i].sopClassUid, headers[i].sopInstanceUid});
    if (progress) progress(static_cast<int64_t>(i + 1), static_cast<int64_t>(files.size()));
  }
  return stored;
}

}  // namespace medseg
