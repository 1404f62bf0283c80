#include "core/infer/InferencePlan.h"

#include <algorithm>
#include <map>
#include <regex>

#include "core/io/ImageIO.h"
#include "core/util/Interrupt.h"

namespace medseg {
namespace {

namespace fs = std::filesystem;

bool namesImageFile(const fs::path& path, MaskFormat format) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return false;
  return isSupportedImagePath(path) || (format == MaskFormat::DicomSeg && path.extension() == ".dcm");
}

// A DICOM SEG refers to a source series: the DICOM folder the case is read from, or the one given.
void attachDicomReference(InferenceCase& job, const InferenceOptions& o) {
  job.format = o.format;
  job.dicomSeries = o.dicomSeries;
  if (o.format != MaskFormat::DicomSeg) return;
  std::error_code ec;
  if (!o.dicomReference.empty()) job.dicomReference = o.dicomReference;
  else if (job.entry.images.size() == 1 && fs::is_directory(job.entry.images.front(), ec)) job.dicomReference = job.entry.images.front();
  else
    throw InputError("--format seg writes a DICOM SEG over its DICOM source series, but case " + job.entry.id +
                     " is read from " + job.entry.images.front().string() +
                     "; give a DICOM folder or a pacs:// input, or use --format nifti|nrrd");
}

InferenceCase makeCase(const std::string& id, std::vector<fs::path> images, const fs::path& labelsOut) {
  InferenceCase job;
  job.entry.id = id;
  job.entry.images = std::move(images);
  job.labelsOut = labelsOut;
  job.probabilitiesOut = probabilitiesPathFor(labelsOut);
  return job;
}

std::vector<InferenceCase> datasetCases(const fs::path& root, const InferenceOptions& o, const fs::path& outDir) {
  const Dataset dataset = loadDataset(root);
  std::vector<const CaseEntry*> chosen;
  if (!o.cases.empty()) {
    for (const auto& id : o.cases) {
      const CaseEntry* found = nullptr;
      for (const auto* list : {&dataset.test, &dataset.training})
        for (const auto& c : *list)
          if (c.id == id) found = &c;
      if (!found) throw InputError("data set " + root.string() + " has no case \"" + id + "\" (see `medseg dataset info`)");
      chosen.push_back(found);
    }
  } else {
    if (o.subset == "test" || o.subset == "all")
      for (const auto& c : dataset.test) chosen.push_back(&c);
    if (o.subset == "training" || o.subset == "all")
      for (const auto& c : dataset.training) chosen.push_back(&c);
    if (chosen.empty())
      throw InputError("data set " + root.string() + " lists no " + (o.subset == "all" ? "" : o.subset + " ") +
                       "cases" + (o.subset == "test" ? "; use --subset training or --case ID to segment training cases" : ""));
  }
  std::vector<InferenceCase> jobs;
  for (const auto* c : chosen) {
    InferenceCase job = makeCase(c->id, c->images, outDir / (c->id + maskExtension(o.format)));
    job.entry = *c;
    job.entry.label.clear();
    for (const auto& [stored, value] : dataset.storedLabels) job.storedLabels[value] = stored;
    job.storedLabelNames = dataset.storedLabelNames;
    jobs.push_back(std::move(job));
  }
  return jobs;
}

// Image files of a folder; nnU-Net channel files (<id>_0000.nii.gz ...) grouped into one case.
std::vector<InferenceCase> folderCases(const std::vector<fs::path>& files, const fs::path& outDir, const std::string& ext) {
  static const std::regex channelFile(R"((.+)_(\d{4})(\.[A-Za-z.]+)$)");
  std::map<std::string, std::map<int, fs::path>> grouped;
  bool allChannelFiles = true;
  for (const auto& f : files) {
    std::smatch m;
    const std::string name = f.filename().string();
    if (!std::regex_match(name, m, channelFile)) {
      allChannelFiles = false;
      break;
    }
    grouped[m[1].str()][std::stoi(m[2].str())] = f;
  }
  // Grouping needs every case to have the same channels _0000.._000(n-1); anything else (scan_0001,
  // scan_0002 numbered cases) is a folder of one-file cases.
  const size_t channelCount = grouped.empty() ? 0 : grouped.begin()->second.size();
  for (const auto& [id, channels] : grouped) {
    int expected = 0;
    for (const auto& entry : channels) allChannelFiles = allChannelFiles && entry.first == expected++;
    allChannelFiles = allChannelFiles && channels.size() == channelCount;
  }
  std::vector<InferenceCase> jobs;
  if (allChannelFiles && !grouped.empty()) {
    for (const auto& [id, channels] : grouped) {
      std::vector<fs::path> images;
      for (const auto& entry : channels) images.push_back(entry.second);
      jobs.push_back(makeCase(id, images, outDir / (id + ext)));
    }
    return jobs;
  }
  for (const auto& f : files) {
    const std::string id = caseIdFromFileName(f, "");
    jobs.push_back(makeCase(id, {f}, outDir / (id + ext)));
  }
  return jobs;
}

void requireOutputsAreNotInputs(const std::vector<InferenceCase>& jobs) {
  for (const auto& job : jobs)
    for (const auto& image : job.entry.images) {
      std::error_code ec;
      const auto a = fs::weakly_canonical(image, ec), b = fs::weakly_canonical(job.labelsOut, ec);
      const auto c = fs::weakly_canonical(job.probabilitiesOut, ec);
      if (a == b || a == c)
        throw InputError("output " + job.labelsOut.string() + " would overwrite the input image " + image.string() +
                         "; choose another --out");
    }
}

}  // namespace

fs::path probabilitiesPathFor(const fs::path& labels) {
  const std::string name = labels.filename().string();
  for (const std::string ext : {".nii.gz", ".nii", ".nrrd", ".nhdr", ".mha", ".mhd"})
    if (name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0)
      return labels.parent_path() / (name.substr(0, name.size() - ext.size()) + "_probabilities" + ext);
  return labels.parent_path() / (name + "_probabilities.nii.gz");
}

std::vector<InferenceCase> planInference(const InferenceOptions& o) {
  o.validate();
  const fs::path& input = o.input;
  const fs::path& out = o.output;
  if (input.empty()) throw InputError("no input given (an image file, DICOM folder, data-set folder or image folder)");
  if (out.empty()) throw InputError("no output given (--out: a label file or a folder)");
  if (!fs::exists(input)) throw InputError("input " + input.string() + " does not exist");
  const bool outIsFile = namesImageFile(out, o.format);
  if (outIsFile && o.format == MaskFormat::DicomSeg && out.extension() != ".dcm")
    throw InputError("--format seg writes a DICOM file: name --out with .dcm (or give a folder)");
  std::vector<InferenceCase> jobs;
  auto singleOutput = [&](const std::string& id) { return outIsFile ? out : out / (id + maskExtension(o.format)); };
  if (fs::is_regular_file(input)) {
    if (!isSupportedImagePath(input))
      throw InputError("input " + input.string() + " is not an image file (.nii.gz, .nii, .nrrd, .nhdr, .mha, .mhd), "
                       "a data-set folder, an image folder or a DICOM folder");
    const std::string id = caseIdFromFileName(input, "");
    jobs.push_back(makeCase(id, {input}, singleOutput(id)));
  } else if (fs::is_directory(input)) {
    if (isDatasetFolder(input)) {
      if (outIsFile) throw InputError("--out must be a folder when the input is a data set");
      jobs = datasetCases(input, o, out);
    } else {
      std::vector<fs::path> files;
      for (const auto& e : fs::directory_iterator(input))
        if (e.is_regular_file() && isSupportedImagePath(e.path())) files.push_back(e.path());
      std::sort(files.begin(), files.end());
      if (files.empty()) {
        const std::string id = input.filename().empty() ? input.parent_path().filename().string() : input.filename().string();
        jobs.push_back(makeCase(id, {input}, singleOutput(id)));  // a DICOM series
      } else {
        if (outIsFile && files.size() > 1) throw InputError("--out must be a folder when the input folder holds several images");
        jobs = folderCases(files, out, maskExtension(o.format));
        if (outIsFile) jobs.front().labelsOut = out, jobs.front().probabilitiesOut = probabilitiesPathFor(out);
      }
    }
  } else {
    throw InputError("input " + input.string() + " is neither a file nor a folder");
  }
  if ((!o.cases.empty() || o.subset != "test") && !isDatasetFolder(input))
    throw InputError("--case and --subset apply to data-set folders (with dataset.json, or a BraTS folder) only");
  requireOutputsAreNotInputs(jobs);
  for (auto& job : jobs) attachDicomReference(job, o);
  return jobs;
}

}  // namespace medseg
