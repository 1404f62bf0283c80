#include "cluster/infer/MaskMetrics.h"

#include <algorithm>

#include "core/io/ImageIO.h"
#include "core/util/Interrupt.h"

namespace medseg::cluster {

MaskMetrics evaluateMasks(std::vector<MaskReference> cases, const LabelScheme& scheme) {
  std::sort(cases.begin(), cases.end(), [](const MaskReference& a, const MaskReference& b) { return a.id < b.id; });
  MaskMetrics out;
  for (const auto& c : cases) {
    std::error_code ec;
    if (!std::filesystem::exists(c.mask, ec)) continue;
    nlohmann::json entry = {{"case", c.id}, {"mask", c.mask.string()}};
    nlohmann::json images = nlohmann::json::array();
    for (const auto& image : c.images) images.push_back(image.string());
    entry["images"] = images;
    if (!c.reference.empty()) {
      entry["reference"] = c.reference.string();
      try {
        out.evaluated.push_back(evaluateSegmentation(readLabels(c.mask), readLabels(c.reference), scheme, c.id));
        entry["metrics"] = out.evaluated.back().toJson();
      } catch (const ImageIOError& e) {
        ++out.failed;
        entry["error"] = e.what();
      } catch (const InputError& e) {
        ++out.failed;
        entry["error"] = e.what();
      }
    }
    out.cases.push_back(entry);
  }
  return out;
}

}  // namespace medseg::cluster
