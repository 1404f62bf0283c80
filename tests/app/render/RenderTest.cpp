// The 3-D scene (app/render) and `medseg render`: label surfaces are extracted per label, offscreen
// snapshots have the requested size and show the labels' colours, and the command writes a PNG or
// fails cleanly. Runs under a (virtual) X display, as ctest does with xvfb-run. Pictures are kept
// in artifacts/ of the test's working folder.
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>

#include <vtkActorCollection.h>
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkPNGReader.h>
#include <vtkRenderer.h>

#include "app/render/LabelScene.h"
#include "app/render/OffscreenSnapshot.h"
#include "core/io/ImageIO.h"
#include "support/Phantoms.h"
#include "support/TestSupport.h"

namespace medseg {
namespace {
namespace fs = std::filesystem;
using test::phantomImage;
using test::phantomLabels;

// Pixels of the label colour's hue: each channel near the label colour scaled to the pixel's
// brightness (shading darkens; the see-through context surface tints a little), within 30 % of
// the brightness, so dark background pixels never pass as a label.
bool looksLike(render::Rgb pixel, render::Rgb colour) {
  const double brightness = std::max({pixel.r, pixel.g, pixel.b});
  if (brightness < 90) return false;
  const double scale = brightness / std::max({colour.r, colour.g, colour.b});
  const double tolerance = 0.3 * brightness;
  return std::abs(pixel.r - colour.r * scale) < tolerance && std::abs(pixel.g - colour.g * scale) < tolerance &&
         std::abs(pixel.b - colour.b * scale) < tolerance;
}

int countLike(const render::Snapshot& snapshot, int label) {
  const render::Rgb colour = render::defaultLabelLook(label).colour;
  int count = 0;
  for (int y = 0; y < snapshot.height; ++y)
    for (int x = 0; x < snapshot.width; ++x) count += looksLike(snapshot.pixel(x, y), colour);
  return count;
}

render::Snapshot readPng(const fs::path& path) {
  vtkNew<vtkPNGReader> reader;
  reader->SetFileName(path.c_str());
  reader->Update();
  vtkImageData* image = reader->GetOutput();
  render::Snapshot snapshot;
  snapshot.width = image->GetDimensions()[0];
  snapshot.height = image->GetDimensions()[1];
  const int components = image->GetNumberOfScalarComponents();
  for (int y = snapshot.height - 1; y >= 0; --y)
    for (int x = 0; x < snapshot.width; ++x) {
      const auto* p = static_cast<const uint8_t*>(image->GetScalarPointer(x, y, 0));
      snapshot.rgb.insert(snapshot.rgb.end(), {p[0], p[components > 1 ? 1 : 0], p[components > 2 ? 2 : 0]});
    }
  return snapshot;
}

fs::path artifact(const std::string& name) {
  fs::create_directories("artifacts");
  return fs::absolute(fs::path("artifacts") / name);
}

TEST(LabelScene, BuildsOneSurfacePerLabelPresent) {
  const ImageVolume image = phantomImage();
  const LabelVolume labels = phantomLabels(image);
  EXPECT_EQ(render::labelsPresent(labels), (std::vector<int>{1, 3}));
  vtkNew<vtkRenderer> renderer;
  render::LabelScene scene(renderer);
  scene.setLabels(labels);
  EXPECT_EQ(scene.surfaceLabels(), (std::vector<int>{1, 3}));
  const long long all = scene.triangleCount();
  EXPECT_GT(all, 100);
  scene.setLabels(labels, {3});
  EXPECT_EQ(scene.surfaceLabels(), (std::vector<int>{3}));
  EXPECT_GT(scene.triangleCount(), 12);
  EXPECT_LT(scene.triangleCount(), all);
  scene.setLabels(LabelVolume{});
  EXPECT_EQ(scene.surfaceCount(), 0);
  EXPECT_EQ(renderer->GetActors()->GetNumberOfItems(), 0);
}

TEST(LabelScene, SurfacesSitInWorldSpace) {
  const ImageVolume image = phantomImage();
  vtkNew<vtkRenderer> renderer;
  render::LabelScene scene(renderer);
  scene.setLabels(phantomLabels(image), {3});
  double bounds[6];
  renderer->ComputeVisiblePropBounds(bounds);
  // The cube spans voxels 20..27 in x: world x = origin + index * spacing, about -6 to 4.5 mm.
  EXPECT_NEAR(bounds[0], -36.0 + 20 * 1.5, 2.0);
  EXPECT_NEAR(bounds[1], -36.0 + 27 * 1.5, 2.0);
  EXPECT_NEAR(bounds[4], -40.0 + 16 * 2.0, 2.5);
}

TEST(OffscreenSnapshot, ShowsLabelColoursAtTheRequestedSize) {
  const ImageVolume image = phantomImage();
  vtkNew<vtkRenderer> renderer;
  render::LabelScene scene(renderer);
  scene.setBrain(image);
  scene.setLabels(phantomLabels(image));
  scene.placeCamera();
  const render::Snapshot snapshot = render::renderOffscreen(renderer, 320, 240);
  render::writePng(snapshot, artifact("render-scene.png"));
  ASSERT_EQ(snapshot.width, 320);
  ASSERT_EQ(snapshot.height, 240);
  EXPECT_GT(countLike(snapshot, 1), 320 * 240 / 50) << "no edema-green surface in the picture";
  // The corner is the dark background, not a label.
  const render::Rgb corner = snapshot.pixel(0, 0);
  EXPECT_LT(corner.r, 80);
  EXPECT_LT(corner.g, 80);
  // The PNG holds the same pixels.
  const render::Snapshot back = readPng(artifact("render-scene.png"));
  EXPECT_EQ(back.width, 320);
  EXPECT_EQ(back.rgb, snapshot.rgb);
}

class RenderCli : public ::testing::Test {
 protected:
  void SetUp() override {
    image_ = phantomImage();
    writeImage(image_, dir_ / "image.nii.gz");
    writeLabels(phantomLabels(image_), dir_ / "mask.nii.gz");
  }
  test::ScratchDir dir_{"render-cli"};
  ImageVolume image_;
};

TEST_F(RenderCli, WritesPngOfRequestedSizeWithLabelColours) {
  const fs::path out = artifact("render-cli.png");
  fs::remove(out);
  const auto result = test::runMedseg({"--json", "render", "--image", (dir_ / "image.nii.gz").string(), "--mask",
                                       (dir_ / "mask.nii.gz").string(), "--out", out.string(), "--size", "400x300",
                                       "--azimuth", "45", "--elevation", "10"});
  ASSERT_EQ(result.exitCode, 0) << result.output;
  const auto events = test::jsonLines(result.output);
  ASSERT_FALSE(events.empty()) << result.output;
  EXPECT_EQ(events.back()["kind"], "render");
  EXPECT_EQ(events.back()["labels"], nlohmann::json::array({1, 3}));
  EXPECT_GT(events.back()["triangles"].get<long long>(), 100);
  const render::Snapshot picture = readPng(out);
  ASSERT_EQ(picture.width, 400);
  ASSERT_EQ(picture.height, 300);
  EXPECT_GT(countLike(picture, 1), 400 * 300 / 50);
  // No temporary file is left beside it.
  for (const auto& entry : fs::directory_iterator(out.parent_path()))
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos) << entry.path();
}

TEST_F(RenderCli, LabelsSelectsTheSurfaces) {
  const fs::path out = artifact("render-cli-enhancing.png");
  const auto result = test::runMedseg({"render", "--image", (dir_ / "image.nii.gz").string(), "--mask",
                                       (dir_ / "mask.nii.gz").string(), "--out", out.string(), "--size", "240x200",
                                       "--labels", "3"});
  ASSERT_EQ(result.exitCode, 0) << result.output;
  const render::Snapshot picture = readPng(out);
  EXPECT_GT(countLike(picture, 3), 240 * 200 / 100) << "no enhancing-yellow surface";
  EXPECT_LT(countLike(picture, 1), 240 * 200 / 1000) << "edema is drawn although only label 3 was asked for";
}

TEST_F(RenderCli, VolumeRenderingWithoutMaskIsNotBlank) {
  const fs::path out = artifact("render-cli-volume.png");
  const auto result = test::runMedseg({"render", "--image", (dir_ / "image.nii.gz").string(), "--out",
                                       out.string(), "--size", "200x160", "--volume-rendering"});
  ASSERT_EQ(result.exitCode, 0) << result.output;
  const render::Snapshot picture = readPng(out);
  int bright = 0;
  for (int y = 0; y < picture.height; ++y)
    for (int x = 0; x < picture.width; ++x) bright += picture.pixel(x, y).r > 110;
  EXPECT_GT(bright, 200 * 160 / 50);
}

TEST_F(RenderCli, RefusesBadInputWithoutWritingAPicture) {
  const fs::path out = dir_ / "never.png";
  // A mask on another grid.
  writeLabels(LabelVolume({10, 10, 10}, 1), dir_ / "small.nii.gz");
  auto result = test::runMedseg({"render", "--image", (dir_ / "image.nii.gz").string(), "--mask",
                                 (dir_ / "small.nii.gz").string(), "--out", out.string()});
  EXPECT_EQ(result.exitCode, 3) << result.output;
  EXPECT_NE(result.output.find("grid"), std::string::npos) << result.output;
  // A label the mask does not have.
  result = test::runMedseg({"render", "--image", (dir_ / "image.nii.gz").string(), "--mask",
                            (dir_ / "mask.nii.gz").string(), "--out", out.string(), "--labels", "2"});
  EXPECT_EQ(result.exitCode, 3) << result.output;
  EXPECT_NE(result.output.find("labels present: 1,3"), std::string::npos) << result.output;
  // A malformed size is a usage error.
  result = test::runMedseg({"render", "--image", (dir_ / "image.nii.gz").string(), "--out", out.string(), "--size",
                            "800by600"});
  EXPECT_EQ(result.exitCode, 2) << result.output;
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(RenderCli, WithoutDisplayFailsWithAnActionableMessage) {
  const char* display = std::getenv("DISPLAY");
  const std::string saved = display ? display : "";
  ::unsetenv("DISPLAY");  // the child inherits the environment
  const fs::path out = dir_ / "never.png";
  const auto result = test::runMedseg({"render", "--image", (dir_ / "image.nii.gz").string(), "--out", out.string()});
  if (display) ::setenv("DISPLAY", saved.c_str(), 1);
  EXPECT_EQ(result.exitCode, 4) << result.output;
  EXPECT_NE(result.output.find("xvfb-run"), std::string::npos) << result.output;
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace medseg
