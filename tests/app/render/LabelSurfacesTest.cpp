// Label surfaces within a triangle budget (app/render/LabelSurfaces): cropping, island removal,
// coarser grids for fragmented masks, cancellation.
#include <gtest/gtest.h>

#include <random>

#include <vtkPolyData.h>

#include "app/render/LabelCensus.h"
#include "app/render/LabelCrop.h"
#include "app/render/LabelSurfaces.h"

using namespace medseg;

namespace {
// A 6^3 cube of `label` at (10,10,10) and single voxels of it scattered elsewhere.
LabelVolume cubeWithSpecks(int label, int specks) {
  LabelVolume labels({40, 40, 40}, 1);
  for (int64_t z = 10; z < 16; ++z)
    for (int64_t y = 10; y < 16; ++y)
      for (int64_t x = 10; x < 16; ++x) labels.at(x, y, z) = static_cast<uint8_t>(label);
  for (int i = 0; i < specks; ++i) labels.at(25 + (i % 5) * 3, 25 + (i / 5) * 3, 30) = static_cast<uint8_t>(label);
  return labels;
}

// Every voxel a random label 0..3: the worst case for a surface (a boundary at almost every face).
LabelVolume noise(Size3 size, unsigned seed) {
  LabelVolume labels(size, 1);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> value(0, 3);
  for (uint8_t& v : labels.data) v = static_cast<uint8_t>(value(rng));
  return labels;
}

int64_t totalTriangles(const LabelVolume& labels, const render::SurfaceOptions& options,
                       std::vector<render::LabelSurface>* surfaces = nullptr) {
  const render::SurfacePlan plan = render::planSurfaces(labels, {}, options, render::neverCancelled());
  int64_t total = 0;
  render::buildLabelSurfaces(labels, plan, options, render::neverCancelled(), [&](render::LabelSurface s, int) {
    total += s.polyData->GetNumberOfPolys();
    if (surfaces) surfaces->push_back(s);
  });
  return total;
}
}  // namespace

TEST(LabelCensus, CountsVoxelsBoxesAndBoundaryOfEachLabel) {
  const LabelVolume labels = cubeWithSpecks(2, 3);
  const auto census = render::labelCensus(labels, render::neverCancelled());
  ASSERT_EQ(census.size(), 1u);
  EXPECT_EQ(census[0].label, 2);
  EXPECT_EQ(census[0].voxels, 216 + 3);
  EXPECT_EQ(census[0].lower, (std::array<int64_t, 3>{10, 10, 10}));
  EXPECT_EQ(census[0].upper, (std::array<int64_t, 3>{31, 25, 30}));
  EXPECT_EQ(census[0].boundaryFaces, 6 * 36 + 3 * 6);
}

TEST(LabelCrop, DropsIslandsBelowTheSizeAndKeepsTheRest) {
  const LabelVolume labels = cubeWithSpecks(1, 7);
  const auto census = render::labelCensus(labels, render::neverCancelled());
  render::LabelCrop crop = render::cropLabel(labels, census[0]);
  EXPECT_EQ(crop.size, (Size3{30, 21, 23}));
  EXPECT_EQ(render::removeSmallIslands(crop, 10, render::neverCancelled()), 7);
  EXPECT_EQ(render::boundaryFaces(crop), 6 * 36);
  render::LabelCrop untouched = render::cropLabel(labels, census[0]);
  EXPECT_EQ(render::removeSmallIslands(untouched, 1, render::neverCancelled()), 0);
}

TEST(LabelSurfaces, SmallIslandsGetNoSurfaceByDefault) {
  render::SurfaceOptions keepAll;
  keepAll.minIslandVoxels = 0;
  std::vector<render::LabelSurface> surfaces;
  const int64_t withSpecks = totalTriangles(cubeWithSpecks(1, 20), keepAll);
  const int64_t byDefault = totalTriangles(cubeWithSpecks(1, 20), {}, &surfaces);
  ASSERT_EQ(surfaces.size(), 1u);
  EXPECT_EQ(surfaces[0].islandVoxelsDropped, 20);
  EXPECT_EQ(byDefault, totalTriangles(cubeWithSpecks(1, 0), keepAll));  // the cube alone
  EXPECT_GT(withSpecks, byDefault);
}

TEST(LabelSurfaces, CroppedSurfaceSitsWhereTheLabelIs) {
  LabelVolume labels = cubeWithSpecks(3, 0);
  labels.geometry.spacing = {1.5, 1.5, 2.0};
  std::vector<render::LabelSurface> surfaces;
  totalTriangles(labels, {}, &surfaces);
  ASSERT_EQ(surfaces.size(), 1u);
  double bounds[6];
  surfaces[0].polyData->GetBounds(bounds);
  // Voxels 10..15: the surface runs between their centres' outer half-voxel, smoothed a little.
  EXPECT_NEAR(bounds[0], 10 * 1.5, 1.5);
  EXPECT_NEAR(bounds[1], 15 * 1.5, 1.5);
  EXPECT_NEAR(bounds[4], 10 * 2.0, 2.0);
  EXPECT_NEAR(bounds[5], 15 * 2.0, 2.0);
}

TEST(LabelSurfaces, NoiseStaysWithinTheTriangleBudget) {
  const LabelVolume labels = noise({96, 96, 64}, 3);
  render::SurfaceOptions options;
  options.minIslandVoxels = 0;  // keep the specks: the budget alone must hold
  options.triangleBudget = 60'000;
  std::vector<render::LabelSurface> surfaces;
  const int64_t total = totalTriangles(labels, options, &surfaces);
  EXPECT_LE(total, options.triangleBudget);
  EXPECT_GT(total, options.triangleBudget / 20);  // coarser, not empty
  ASSERT_EQ(surfaces.size(), 3u);
  for (const auto& surface : surfaces) EXPECT_GT(surface.sampling, 1.0) << "label " << surface.label;
  // The same without a real budget: far more triangles, at full resolution.
  options.triangleBudget = 100'000'000;
  EXPECT_GT(totalTriangles(labels, options), 10 * total);
}

TEST(LabelSurfaces, ACancelledBuildThrowsAndHandsOverNothingMore) {
  const LabelVolume labels = noise({64, 64, 64}, 4);
  render::Cancellation cancel;
  const render::SurfacePlan plan = render::planSurfaces(labels, {}, {}, cancel);
  ASSERT_EQ(plan.extents.size(), 3u);
  int handed = 0;
  EXPECT_THROW(render::buildLabelSurfaces(labels, plan, {}, cancel,
                                          [&](render::LabelSurface, int) {
                                            ++handed;
                                            cancel.cancel();
                                          }),
               render::BuildCancelled);
  EXPECT_EQ(handed, 1);
}
