#pragma once
// The training plugin the host uses when nothing names one: a training config without `plugin:`, and
// `medseg bench`, `medseg export`, `medseg dataset preprocess`, the demo and the studio's panels without
// --plugin. One place for it, so a product built around another training plugin changes one line.
namespace medseg::plugin {

inline constexpr const char* kDefaultTrainingPlugin = "unet3d";

}  // namespace medseg::plugin
