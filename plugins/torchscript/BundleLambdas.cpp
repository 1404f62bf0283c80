#include "plugins/torchscript/BundleLambdas.h"

#include <cctype>
#include <map>

namespace medseg::torchscript {
namespace {

bool wordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// `text` with the identifier `from` (whole words only, not after a '.') renamed `to`.
std::string renamed(const std::string& text, const std::string& from, const std::string& to) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    const bool starts = text.compare(i, from.size(), from) == 0 && (i == 0 || (!wordChar(text[i - 1]) && text[i - 1] != '.')) &&
                        (i + from.size() >= text.size() || !wordChar(text[i + from.size()]));
    if (starts) {
      out += to;
      i += from.size();
    } else {
      out += text[i++];
    }
  }
  return out;
}

const std::map<std::string, ChannelsToLabels>& published() {
  static const std::map<std::string, ChannelsToLabels> table{
      {"lambdax:torch.where(x[[2]]>0,4,torch.where(x[[0]]>0,1,torch.where(x[[1]]>0,2,0)))",
       // Channels TC, WT, ET to BraTS's labels: enhancing 4, the rest of the core 1, the rest of the
       // whole tumour (the edema) 2, as the BraTS 2018-2021 challenges label them.
       ChannelsToLabels{{{2, 0.0, 4}, {0, 0.0, 1}, {1, 0.0, 2}}, 0, "brats_mri_segmentation", {{1, "NCR/NET"}, {2, "ED"}, {4, "ET"}}}}};
  return table;
}

}  // namespace

torch::Tensor ChannelsToLabels::apply(const torch::Tensor& outputs) const {
  auto labels = torch::full({1, outputs.size(1), outputs.size(2), outputs.size(3)}, double(otherwise), torch::kFloat32);
  for (auto rule = rules.rbegin(); rule != rules.rend(); ++rule)  // the first rule is the outermost where
    labels = torch::where(outputs.slice(0, rule->channel, rule->channel + 1) > rule->above,
                          torch::full_like(labels, double(rule->label)), labels);
  return labels;
}

std::string normalisedLambda(const std::string& func) {
  std::string text;
  for (char c : func)
    if (!std::isspace(static_cast<unsigned char>(c))) text += c;
  if (!text.empty() && text[0] == '$') text.erase(0, 1);
  if (text.rfind("lambda", 0) != 0) return "";
  const size_t colon = text.find(':');
  const std::string parameter = text.substr(6, colon == std::string::npos ? 0 : colon - 6);
  if (parameter.empty() || !std::all_of(parameter.begin(), parameter.end(), wordChar)) return text;
  return "lambdax:" + renamed(text.substr(colon + 1), parameter, "x");
}

std::optional<ChannelsToLabels> publishedLambda(const std::string& func) {
  const auto found = published().find(normalisedLambda(func));
  if (found == published().end()) return std::nullopt;
  return found->second;
}

}  // namespace medseg::torchscript
