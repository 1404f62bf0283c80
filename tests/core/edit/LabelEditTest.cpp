// Editing a label map: brush strokes on the map's own grid, the rules (locked labels, intensity
// range), region edits and the undo history, counted voxel by voxel.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/edit/Brush.h"
#include "core/edit/EditHistory.h"
#include "core/edit/RegionEdits.h"
#include "support/Phantoms.h"

namespace medseg {
namespace {

LabelVolume emptyMap(Size3 size = {40, 30, 20}, std::array<double, 3> spacing = {1.0, 1.0, 1.0}) {
  return test::emptyLabelMap(size, spacing);
}

int64_t count(const LabelVolume& labels, uint8_t label) {
  return std::count(labels.data.begin(), labels.data.end(), label);
}

TEST(Brush, DiskCoversTheVoxelsWithinItsRadiusInTheViewsPlaneOnly) {
  const LabelVolume map = emptyMap();
  const Brush disk{2.0, false, 2};
  const auto voxels = brushVoxels(disk, map.size, map.geometry, {10, 10, 5});
  // Centres within 2 mm on a 1 mm grid: 13 (the 5x5 square minus corners and the 4 at distance sqrt(5)).
  EXPECT_EQ(voxels.size(), 13u);
  for (const auto& v : voxels) {
    EXPECT_EQ(v[2], 5);
    EXPECT_LE(std::hypot(v[0] - 10.0, v[1] - 10.0), 2.0);
  }
  const Brush ball{2.0, true, 2};
  EXPECT_EQ(brushVoxels(ball, map.size, map.geometry, {10, 10, 5}).size(), 33u);  // 13 + 2 x 9 + 2 x 1
  // Anisotropic voxels: 3 mm slices, so a 2 mm ball reaches no other slice; 0.5 mm columns double x's reach.
  const LabelVolume thick = emptyMap({40, 30, 20}, {0.5, 1.0, 3.0});
  for (const auto& v : brushVoxels(ball, thick.size, thick.geometry, {10, 10, 5})) EXPECT_EQ(v[2], 5);
  EXPECT_EQ(brushVoxels(disk, thick.size, thick.geometry, {10, 10, 5}).size(), 25u);
  // A radius under half a voxel still paints the voxel under the cursor; the edge clips.
  EXPECT_EQ(brushVoxels(Brush{0.1, false, 2}, map.size, map.geometry, {0, 0, 0}).size(), 1u);
  EXPECT_EQ(brushVoxels(disk, map.size, map.geometry, {0, 0, 0}).size(), 6u);
}

TEST(LabelEditBuilder, LockedLabelsAndTheIntensityRangeKeepTheirVoxels) {
  LabelVolume map = emptyMap();
  map.at(5, 5, 5) = 2;
  ImageVolume image(map.size, 2, map.geometry, 0.0f);
  image.at(6, 5, 5, 1) = 10.0f;
  EditRules rules;
  rules.lockedLabels = {2};
  rules.intensity = IntensityRange{1, 5.0, 20.0};
  LabelEditBuilder edit(map, rules, &image);
  EXPECT_FALSE(edit.set(5, 5, 5, 1)) << "label 2 is locked";
  EXPECT_FALSE(edit.set(7, 5, 5, 1)) << "channel 1 is 0 there, outside 5..20";
  EXPECT_TRUE(edit.set(6, 5, 5, 1));
  EXPECT_FALSE(edit.clear(5, 5, 5, 0)) << "erasing spares a locked label too";
  const LabelEdit done = edit.finish("paint");
  ASSERT_EQ(done.voxels(), 1u);
  EXPECT_EQ(done.before[0], 0);
  EXPECT_EQ(done.after[0], 1);
  EXPECT_EQ(map.at(6, 5, 5), 1);
  EXPECT_EQ(map.at(5, 5, 5), 2);
  EXPECT_THROW(LabelEditBuilder(map, rules, nullptr), std::invalid_argument);
}

TEST(Brush, AStrokeIsContinuousAndEraseClearsOnlyTheActiveLabel) {
  LabelVolume map = emptyMap();
  LabelEditBuilder edit(map, {});
  const Brush disk{0.5, false, 2};  // one voxel wide
  strokeSegment(edit, disk, map.geometry, map.size, {2, 3, 4}, {12, 8, 4}, 1, false);
  const LabelEdit stroke = edit.finish("stroke");
  EXPECT_EQ(stroke.voxels(), 11u) << "one voxel per step of the longer axis, no gaps";
  map.at(20, 20, 4) = 3;
  LabelEditBuilder erase(map, {});
  strokeSegment(erase, Brush{30.0, false, 2}, map.geometry, map.size, {10, 10, 4}, {10, 10, 4}, 1, true);
  EXPECT_EQ(erase.finish("erase").voxels(), 11u);
  EXPECT_EQ(count(map, 1), 0);
  EXPECT_EQ(map.at(20, 20, 4), 3) << "erasing label 1 leaves label 3";
}

TEST(EditHistory, UndoOfFiftyEditsRestoresTheMapBitForBitAndRedoRepeatsThem) {
  LabelVolume map = emptyMap();
  std::mt19937 random(3);
  for (auto& v : map.data) v = uint8_t(random() % 3 == 0 ? random() % 4 : 0);
  const LabelVolume original = map;
  EditHistory history;
  std::vector<LabelVolume> after;
  for (int i = 0; i < 50; ++i) {
    LabelEditBuilder edit(map, {});
    const std::array<int64_t, 3> a{int64_t(random() % 40), int64_t(random() % 30), int64_t(random() % 20)};
    strokeSegment(edit, Brush{1.5 + i % 3, i % 2 == 0, 2}, map.geometry, map.size, a, {a[0] / 2, a[1], a[2]},
                  uint8_t(i % 4), i % 5 == 4);
    history.record(edit.finish("edit " + std::to_string(i)));
    after.push_back(map);
  }
  EXPECT_TRUE(history.modified());
  EXPECT_GT(history.bytes(), 0u);
  while (history.canUndo()) history.undo(map);
  EXPECT_EQ(map.data, original.data);
  EXPECT_FALSE(history.modified()) << "back at the loaded state";
  for (size_t i = 0; history.canRedo(); ++i) {
    history.redo(map);
    while (i < after.size() && after[i].data == (i ? after[i - 1].data : original.data)) ++i;  // empty edits are no steps
    ASSERT_LT(i, after.size());
    EXPECT_EQ(map.data, after[i].data) << "redo " << i;
  }
  EXPECT_EQ(map.data, after.back().data);
}

TEST(EditHistory, BoundsDropTheOldestStepAndASavedStateOutOfReachStaysModified) {
  LabelVolume map = emptyMap();
  EditHistory history(3);
  history.markSaved();
  for (int i = 0; i < 5; ++i) {
    LabelEditBuilder edit(map, {});
    edit.set(i, 0, 0, 1);
    history.record(edit.finish("dot " + std::to_string(i)));
  }
  EXPECT_EQ(history.undoSteps(), 3u);
  EXPECT_EQ(history.dropped(), 2u);
  while (history.canUndo()) history.undo(map);
  EXPECT_EQ(count(map, 1), 2) << "the two oldest dots cannot be undone any more";
  EXPECT_TRUE(history.modified());
  history.redo(map);
  history.markSaved();
  EXPECT_FALSE(history.modified());
  history.undo(map);
  EXPECT_TRUE(history.modified());
  // A new edit after undo drops the redo branch.
  LabelEditBuilder edit(map, {});
  edit.set(0, 5, 0, 2);
  history.record(edit.finish("other"));
  EXPECT_FALSE(history.canRedo());
  EXPECT_TRUE(history.modified());
}

TEST(RegionEdits, FillEnclosedHolesOnlyInTheSlice) {
  LabelVolume map = emptyMap();
  for (int64_t x = 5; x <= 15; ++x)  // a 11 x 11 ring of label 1 in slice z = 4, 1 voxel thick
    for (int64_t y = 5; y <= 15; ++y)
      if (x == 5 || x == 15 || y == 5 || y == 15) map.at(x, y, 4) = 1;
  map.at(10, 10, 4) = 2;  // another label inside the hole
  EditRules rules;
  rules.lockedLabels = {2};
  const LabelEdit fill = fillHolesInSlice(map, rules, 2, 4, 1);
  EXPECT_EQ(fill.voxels(), 9u * 9u - 1u) << "the 9 x 9 inside, less the locked voxel";
  EXPECT_EQ(map.at(10, 10, 4), 2);
  EXPECT_EQ(count(map, 1), 40 + 80);
  EXPECT_TRUE(fillHolesInSlice(map, {}, 2, 3, 1).empty()) << "nothing enclosed in slice 3";
  // An open ring has no hole.
  map.at(5, 10, 4) = 0;
  map.at(10, 10, 4) = 0;
  LabelVolume open = emptyMap();
  for (int64_t x = 5; x <= 15; ++x) open.at(x, 5, 4) = open.at(x, 15, 4) = 1;
  EXPECT_TRUE(fillHolesInSlice(open, {}, 2, 4, 1).empty());
}

TEST(RegionEdits, IslandsBelowASizeOrAllButTheLargestBecomeBackground) {
  LabelVolume map = emptyMap();
  for (int64_t x = 0; x < 5; ++x)  // 5 x 5 x 5 = 125
    for (int64_t y = 0; y < 5; ++y)
      for (int64_t z = 0; z < 5; ++z) map.at(x, y, z) = 1;
  map.at(20, 20, 10) = 1;                       // an island of 1
  map.at(30, 20, 10) = map.at(31, 20, 10) = 1;  // an island of 2
  map.at(32, 21, 11) = 1;                       // diagonal: not 6-connected, its own island of 1
  map.at(35, 5, 5) = 3;
  LabelVolume copy = map;
  EXPECT_EQ(removeSmallIslands(map, {}, 1, 2).voxels(), 2u);
  EXPECT_EQ(count(map, 1), 127);
  EXPECT_EQ(keepLargestIsland(copy, {}, 1).voxels(), 4u);
  EXPECT_EQ(count(copy, 1), 125);
  EXPECT_EQ(copy.at(35, 5, 5), 3);
}

TEST(RegionEdits, ASegmentationMergesIntoTheActiveLabelSparingLockedOnes) {
  LabelVolume map = emptyMap();
  map.at(1, 1, 1) = 2;
  LabelVolume grown = emptyMap();
  grown.at(1, 1, 1) = grown.at(2, 1, 1) = grown.at(3, 1, 1) = 1;
  EditRules rules;
  rules.lockedLabels = {2};
  const LabelEdit merged = mergeInto(map, rules, grown, 3, "region-growing");
  EXPECT_EQ(merged.voxels(), 2u);
  EXPECT_EQ(map.at(1, 1, 1), 2);
  EXPECT_EQ(map.at(3, 1, 1), 3);
  EXPECT_NE(merged.description.find("region-growing"), std::string::npos);
  EXPECT_THROW(mergeInto(map, {}, emptyMap({4, 4, 4}), 1, "x"), std::invalid_argument);
}

}  // namespace
}  // namespace medseg
