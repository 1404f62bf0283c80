#include "plugins/torchscript/PostprocessingSteps.h"

#include <algorithm>
#include <map>

#include "core/util/Interrupt.h"
#include "core/util/Text.h"

namespace medseg::torchscript {
namespace {

using nlohmann::json;

bool hasResampling(const std::vector<BundleTransform>& preprocessing, bool bilinearOnly) {
  return std::any_of(preprocessing.begin(), preprocessing.end(), [&](const BundleTransform& t) {
    return t.name() == "Spacingd" && (!bilinearOnly || t.text("mode") != "nearest");
  });
}

void checkInvertd(const BundleTransform& t, const json& preprocessing, const MonaiBundle& b) {
  if (t.value("transform") != preprocessing)
    t.refuse("transform", "is not the bundle's preprocessing: MedSeg inverts \"@preprocessing\" only");
  const json& orig = t.value("orig_keys");
  const bool input = (orig.is_string() && orig == b.inputKey) ||
                     (orig.is_array() && std::find(orig.begin(), orig.end(), json(b.inputKey)) != orig.end());
  if (!input) t.refuse("orig_keys", "must name the input \"" + b.inputKey + "\", whose transforms MedSeg inverts");
}

// Reads the steps one transform at a time, keeping count of the output's channels.
class StepReader {
 public:
  StepReader(MonaiBundle& b, const json& preprocessing) : b_(b), preprocessing_(preprocessing), channels_(b.outputChannels) {}

  void read(const BundleTransform& t) {
    const std::string& n = t.name();
    if (squeezed_ && n != "SaveImaged" && n != "EnsureTyped" && n != "ToTensord")
      throw InputError(t.where() + ": comes after SqueezeDimd, which left the output without its channel axis; "
                                   "MedSeg runs SqueezeDimd last (only SaveImaged after it): move it to the end");
    if (n == "Activationsd") activations(t);
    else if (n == "AsDiscreted") discretise(t);
    else if (n == "Invertd") invert(t);
    else if (n == "KeepLargestConnectedComponentd") keepLargest(t);
    else if (n == "CastToTyped") cast(t);
    else if (n == "Lambdad") lambda(t);
    else if (n == "SqueezeDimd") squeeze(t);
  }

  void finish(const std::string& source) {
    if (!b_.inverted && hasResampling(b_.preprocessing, false))
      throw InputError(source + ": postprocessing has no Invertd, so MONAI writes the mask on the grid Spacingd made; "
                       "MedSeg writes masks on the image's grid: add {\"_target_\": \"Invertd\", \"keys\": \"" + b_.outputKey +
                       "\", \"transform\": \"@preprocessing\", \"orig_keys\": \"" + b_.inputKey + "\"}");
    b_.labels = labels();
  }

 private:
  void activations(const BundleTransform& t) {
    if (t.flag("sigmoid") && t.flag("softmax")) t.refuse("softmax", "and sigmoid are both true (MONAI refuses that too)");
    if (t.flag("softmax")) b_.postprocessing.push_back({PostStep::Softmax});
    if (t.flag("sigmoid")) b_.postprocessing.push_back({PostStep::Sigmoid});
    if (t.flag("softmax") || t.flag("sigmoid")) b_.sigmoid = t.flag("sigmoid");
  }

  void discretise(const BundleTransform& t) {
    if (t.flag("argmax")) {
      b_.postprocessing.push_back({PostStep::Argmax});
      b_.form = OutputForm::Labels;
      channels_ = 1;
    }
    if (t.given("to_onehot")) {
      if (channels_ != 1) t.refuse("to_onehot", "needs one channel of labels: set argmax true before it");
      PostStep step{PostStep::OneHot};
      step.classes = int64_t(t.number("to_onehot"));
      if (step.classes < 1) t.refuse("to_onehot", "must be at least 1 (the number of classes)");
      b_.postprocessing.push_back(step);
      b_.form = OutputForm::OneHot;
      channels_ = step.classes;
    }
    if (t.given("threshold")) {
      PostStep step{PostStep::Threshold};
      step.threshold = t.number("threshold");
      b_.postprocessing.push_back(step);
      if (b_.form != OutputForm::OneHot && b_.form != OutputForm::Labels) b_.form = OutputForm::Regions;
    }
    if (t.given("rounding")) {
      b_.postprocessing.push_back({PostStep::Round});
      if (b_.form == OutputForm::Scores) b_.form = OutputForm::Regions;
    }
  }

  void invert(const BundleTransform& t) {
    if (b_.inverted) t.refuse("transform", "is inverted a second time; MedSeg inverts the preprocessing once");
    checkInvertd(t, preprocessing_, b_);
    PostStep step{PostStep::Invert};
    step.nearest = t.flag("nearest_interp");
    // Labels interpolated linearly are fractions (0.5 between labels 0 and 1): MONAI writes them so.
    if (!step.nearest && b_.form != OutputForm::Scores && hasResampling(b_.preprocessing, true))
      t.refuse("nearest_interp", "after AsDiscreted makes MONAI interpolate the labels linearly, writing fractional "
                                 "label values; MedSeg writes whole labels: set nearest_interp to true (in the config, "
                                 "or in an override file merged after it with --bundle-config, holding {\"" + t.id() +
                                 "#nearest_interp\": true}), or move AsDiscreted after Invertd");
    b_.postprocessing.push_back(step);
    b_.inverted = true;
  }

  void keepLargest(const BundleTransform& t) {
    PostStep step{PostStep::KeepLargest};
    if (t.given("applied_labels")) {
      std::vector<int64_t> labels;
      for (double l : t.numbers("applied_labels")) labels.push_back(int64_t(l));
      step.keep.appliedLabels = labels;
    }
    if (t.given("is_onehot")) step.keep.onehot = t.flag("is_onehot");
    step.keep.independent = t.flag("independent");
    step.keep.connectivity = t.given("connectivity") ? int(t.number("connectivity")) : 3;
    step.keep.count = int64_t(t.number("num_components"));
    if (step.keep.count < 1) t.refuse("num_components", "must be at least 1");
    b_.postprocessing.push_back(step);
  }

  void cast(const BundleTransform& t) {
    const std::string dtype = t.dtype("dtype").value_or("float32");
    const bool whole = dtype != "float32" && dtype != "float64" && dtype != "float16" && dtype != "bfloat16";
    if (whole && b_.form == OutputForm::Scores)
      t.refuse("dtype", "casts the network's scores to " + dtype + ", truncating them to whole numbers, which MONAI "
                        "writes but is no mask: discretise first (AsDiscreted argmax or threshold), then cast");
    PostStep step{PostStep::Cast};
    step.dtype = dtype;
    b_.postprocessing.push_back(step);
  }

  void lambda(const BundleTransform& t) {
    const json& func = t.value("func");
    const std::string text = func.is_string() ? func.get<std::string>() : func.dump();
    auto step = func.is_string() ? publishedLambda(text) : std::nullopt;
    if (!step)
      t.refuse("func", "is Python, which MedSeg cannot run; of lambdas it runs only those the model zoo published "
                       "(brats_mri_segmentation's three channels to labels 1, 2 and 4): replace it with transforms "
                       "MedSeg runs (AsDiscreted argmax, threshold or to_onehot, KeepLargestConnectedComponentd, "
                       "CastToTyped), or remove it");
    for (const auto& rule : step->rules)
      if (rule.channel >= channels_)
        t.refuse("func", "is " + step->published + "'s lambda, which reads channel " + std::to_string(rule.channel) +
                             " of an output with " + std::to_string(channels_) + " channel(s) here");
    b_.postprocessing.push_back(PostStep{PostStep::Relabel});
    b_.postprocessing.back().relabel = *step;
    relabel_ = *step;
    b_.form = OutputForm::Labels;
    channels_ = 1;
  }

  void squeeze(const BundleTransform& t) {
    const json& dim = t.value("dim");
    if (!dim.is_number() || (dim.get<int64_t>() != 0 && dim.get<int64_t>() != -4))
      t.refuse("dim", "is not the channel axis (0): MedSeg writes 3-D masks on the image's grid, so it squeezes "
                      "only the channel axis of a one-channel output");
    if (channels_ != 1)
      t.refuse("dim", "squeezes the channel axis of an output with " + std::to_string(channels_) +
                          " channels (MONAI fails on it too): discretise it to one channel first (AsDiscreted argmax)");
    b_.postprocessing.push_back({PostStep::Squeeze});
    if (b_.form == OutputForm::Scores || b_.form == OutputForm::Regions) b_.form = OutputForm::Labels;
    squeezed_ = true;
  }

  std::string nameOf(const std::vector<std::string>& names, int64_t i) const {
    return i >= 0 && i < int64_t(names.size()) ? names[size_t(i)] : "label_" + std::to_string(i);
  }

  std::vector<BundleLabel> labels() const {
    std::map<int, std::string> named;
    if (relabel_) {
      for (const auto& rule : relabel_->rules)
        named.emplace(int(rule.label), relabel_->labelNames.count(rule.label) ? relabel_->labelNames.at(rule.label)
                                                                               : nameOf(b_.outputNames, rule.channel));
    } else if (b_.regions()) {
      for (int64_t c = 0; c < b_.outputChannels; ++c) named.emplace(int(c + 1), nameOf(b_.outputNames, c));
    } else {
      const int64_t classes = b_.form == OutputForm::OneHot ? channels_ : b_.outputChannels;
      for (int64_t c = 1; c < classes; ++c) named.emplace(int(c), nameOf(b_.labelNames, c));
    }
    std::vector<BundleLabel> out;
    for (const auto& [value, name] : named) out.push_back({value, name});
    return out;
  }

  MonaiBundle& b_;
  const json& preprocessing_;
  int64_t channels_;
  bool squeezed_ = false;
  std::optional<ChannelsToLabels> relabel_;
};

}  // namespace

const std::vector<std::string>& postprocessingTransforms() {
  static const std::vector<std::string> names{"Activationsd", "AsDiscreted",  "CastToTyped", "EnsureTyped",
                                              "Invertd",      "KeepLargestConnectedComponentd", "Lambdad",
                                              "SaveImaged",   "SqueezeDimd",  "ToTensord"};
  return names;
}

void readPostprocessing(const std::vector<BundleTransform>& transforms, const json& preprocessing, const std::string& source,
                        MonaiBundle& b) {
  StepReader reader(b, preprocessing);
  for (const auto& t : transforms) reader.read(t);
  reader.finish(source);
}

}  // namespace medseg::torchscript
