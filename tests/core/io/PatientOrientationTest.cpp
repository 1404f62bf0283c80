// Voxel axes to patient axes: codes, signs, oblique angles, and the slice layouts built on them,
// checked on grids stored in the orders scanners write (axial RAS/LPS, sagittal PIR, flipped LPI).
#include "core/io/PatientOrientation.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/io/SlicePlane.h"
#include "support/Reorient.h"

namespace medseg {
namespace {

Geometry rasGeometry() {
  Geometry g;  // NIfTI's usual RAS storage seen in ITK's LPS world: x toward R, y toward A
  g.direction = {-1, 0, 0, 0, -1, 0, 0, 0, 1};
  g.spacing = {1.0, 1.2, 1.5};
  g.origin = {90, 126, -72};
  return g;
}

Geometry rotatedAboutSuperior(double degrees) {
  const double a = degrees / 57.29577951308232;
  Geometry g;
  g.direction = {std::cos(a), -std::sin(a), 0, std::sin(a), std::cos(a), 0, 0, 0, 1};
  return g;
}

ImageVolume rampOn(const Geometry& geometry) {
  ImageVolume image({7, 5, 4}, 1, geometry);
  for (size_t i = 0; i < image.data.size(); ++i) image.data[i] = static_cast<float>(i);
  return image;
}

std::array<double, 3> worldOf(const ImageVolume& image, const std::array<int64_t, 3>& v) {
  return image.geometry.indexToWorld({double(v[0]), double(v[1]), double(v[2])});
}

TEST(PatientOrientation, IdentityDirectionIsLps) {
  const AxisMapping m = nearestPatientAxes(Geometry{});
  EXPECT_EQ(m.voxelAxis, (std::array<int, 3>{0, 1, 2}));
  EXPECT_EQ(m.sign, (std::array<int, 3>{1, 1, 1}));
  EXPECT_DOUBLE_EQ(m.obliqueDegrees, 0.0);
  EXPECT_EQ(orientationCode(Geometry{}), "LPS");
}

TEST(PatientOrientation, NiftiRasStorage) {
  const AxisMapping m = nearestPatientAxes(rasGeometry());
  EXPECT_EQ(m.voxelAxis, (std::array<int, 3>{0, 1, 2}));
  EXPECT_EQ(m.sign, (std::array<int, 3>{-1, -1, 1}));
  EXPECT_EQ(orientationCode(rasGeometry()), "RAS");
}

TEST(PatientOrientation, ReorientedCopiesHaveTheirCodeAndKeepEveryVoxelInPlace) {
  const ImageVolume ras = rampOn(rasGeometry());
  for (const std::string code : {"PIR", "LPI", "SRA", "ILP"}) {
    const ImageVolume copy = test::reorient(ras, code);
    EXPECT_EQ(orientationCode(copy.geometry), code);
    const auto plan = test::planReorientation(ras.geometry, ras.size, code);
    for (const std::array<int64_t, 3> v : {std::array<int64_t, 3>{0, 0, 0}, {6, 4, 3}, {3, 1, 2}, {5, 0, 1}}) {
      const auto n = plan.toNew(v);
      EXPECT_EQ(copy.at(n[0], n[1], n[2]), ras.at(v[0], v[1], v[2])) << code;
      const auto a = worldOf(ras, v), b = worldOf(copy, n);
      for (int i = 0; i < 3; ++i) EXPECT_NEAR(a[i], b[i], 1e-9) << code << " axis " << i;
    }
  }
  // Sagittal storage: axis 0 runs posterior, 1 inferior, 2 to the right.
  const AxisMapping pir = nearestPatientAxes(test::reorient(ras, "PIR").geometry);
  EXPECT_EQ(pir.voxelAxis, (std::array<int, 3>{2, 0, 1}));
  EXPECT_EQ(pir.sign, (std::array<int, 3>{-1, 1, -1}));
}

TEST(PatientOrientation, ObliqueGridsMapToTheNearestAxesAndReportTheAngle) {
  const AxisMapping small = nearestPatientAxes(rotatedAboutSuperior(20));
  EXPECT_EQ(small.voxelAxis, (std::array<int, 3>{0, 1, 2}));
  EXPECT_NEAR(small.obliqueDegrees, 20.0, 1e-9);
  // Past 45 degrees voxel x is nearer patient A-P than L-R: the mapping swaps, still one-to-one.
  const AxisMapping large = nearestPatientAxes(rotatedAboutSuperior(60));
  EXPECT_EQ(large.voxelAxis, (std::array<int, 3>{1, 0, 2}));
  EXPECT_EQ(large.sign, (std::array<int, 3>{-1, 1, 1}));
  EXPECT_NEAR(large.obliqueDegrees, 30.0, 1e-9);
}

TEST(PatientOrientation, LettersAndRasCoordinates) {
  EXPECT_EQ(patientLetter(PatientAxis::LeftRight, +1), 'L');
  EXPECT_EQ(patientLetter(PatientAxis::LeftRight, -1), 'R');
  EXPECT_EQ(patientLetter(PatientAxis::PosteriorAnterior, -1), 'A');
  EXPECT_EQ(patientLetter(PatientAxis::InferiorSuperior, +1), 'S');
  EXPECT_EQ(lpsToRas({10, -20, 30}), (std::array<double, 3>{-10, 20, 30}));
}

TEST(SlicePlane, LpsGridDrawsAsClinicalViewersDo) {
  const AxisMapping lps = nearestPatientAxes(Geometry{});
  const auto axial = slicePlaneLayout(lps, AnatomicalPlane::Axial, DisplayConvention::Radiological);
  EXPECT_EQ(axial.columnAxis, 0);
  EXPECT_FALSE(axial.columnReversed);
  EXPECT_EQ(axial.rowAxis, 1);
  EXPECT_FALSE(axial.rowReversed);
  EXPECT_EQ(axial.sliceAxis, 2);
  EXPECT_EQ(axial.sliceRasSign, 1);
  EXPECT_EQ(std::string({axial.left, axial.right, axial.top, axial.bottom}), "RLAP");
  const auto neuro = slicePlaneLayout(lps, AnatomicalPlane::Axial, DisplayConvention::Neurological);
  EXPECT_TRUE(neuro.columnReversed);
  EXPECT_EQ(std::string({neuro.left, neuro.right, neuro.top, neuro.bottom}), "LRAP");
  const auto coronal = slicePlaneLayout(lps, AnatomicalPlane::Coronal, DisplayConvention::Radiological);
  EXPECT_EQ(coronal.rowAxis, 2);
  EXPECT_TRUE(coronal.rowReversed);
  EXPECT_EQ(coronal.sliceAxis, 1);
  EXPECT_EQ(coronal.sliceRasSign, -1);  // y grows posterior: the index runs against A
  EXPECT_EQ(std::string({coronal.left, coronal.right, coronal.top, coronal.bottom}), "RLSI");
  const auto sagittal = slicePlaneLayout(lps, AnatomicalPlane::Sagittal, DisplayConvention::Neurological);
  EXPECT_EQ(sagittal.columnAxis, 1);
  EXPECT_FALSE(sagittal.columnReversed);
  EXPECT_EQ(sagittal.sliceAxis, 0);
  EXPECT_EQ(std::string({sagittal.left, sagittal.right, sagittal.top, sagittal.bottom}), "APSI");
}

// The property the viewer relies on: whatever the storage order, a screen pixel of a plane lands on
// the same world point, so the pictures are identical.
TEST(SlicePlane, EveryStorageOrderPutsTheSameAnatomyAtEachScreenPixel) {
  const ImageVolume ras = rampOn(rasGeometry());
  const std::array<int64_t, 3> cursor{3, 2, 1};
  for (const std::string code : {"PIR", "LPI", "ASL"}) {
    const ImageVolume copy = test::reorient(ras, code);
    const auto movedCursor = test::planReorientation(ras.geometry, ras.size, code).toNew(cursor);
    for (const auto convention : {DisplayConvention::Radiological, DisplayConvention::Neurological})
      for (const auto plane : {AnatomicalPlane::Axial, AnatomicalPlane::Coronal, AnatomicalPlane::Sagittal}) {
        const auto a = slicePlaneLayout(nearestPatientAxes(ras.geometry), plane, convention);
        const auto b = slicePlaneLayout(nearestPatientAxes(copy.geometry), plane, convention);
        ASSERT_EQ(ras.size[a.columnAxis], copy.size[b.columnAxis]);
        ASSERT_EQ(ras.size[a.rowAxis], copy.size[b.rowAxis]);
        // One slice step in the RAS sense moves both grids' cursors to the same world point.
        auto stepA = cursor, stepB = movedCursor;
        stepA[a.sliceAxis] += a.sliceRasSign;
        stepB[b.sliceAxis] += b.sliceRasSign;
        const auto sa = worldOf(ras, stepA), sb = worldOf(copy, stepB);
        for (int i = 0; i < 3; ++i) EXPECT_NEAR(sa[i], sb[i], 1e-9) << code << " slice step, axis " << i;
        for (int64_t row = 0; row < ras.size[a.rowAxis]; ++row)
          for (int64_t col = 0; col < ras.size[a.columnAxis]; ++col) {
            auto va = cursor, vb = movedCursor;
            va[a.columnAxis] = SlicePlaneLayout::toIndex(col, ras.size[a.columnAxis], a.columnReversed);
            va[a.rowAxis] = SlicePlaneLayout::toIndex(row, ras.size[a.rowAxis], a.rowReversed);
            vb[b.columnAxis] = SlicePlaneLayout::toIndex(col, copy.size[b.columnAxis], b.columnReversed);
            vb[b.rowAxis] = SlicePlaneLayout::toIndex(row, copy.size[b.rowAxis], b.rowReversed);
            const auto wa = worldOf(ras, va), wb = worldOf(copy, vb);
            for (int i = 0; i < 3; ++i) ASSERT_NEAR(wa[i], wb[i], 1e-9) << code << " plane " << int(plane);
          }
        EXPECT_EQ(std::string({a.left, a.right, a.top, a.bottom}), std::string({b.left, b.right, b.top, b.bottom}));
      }
  }
}

}  // namespace
}  // namespace medseg
