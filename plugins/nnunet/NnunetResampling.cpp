#include "plugins/nnunet/NnunetResampling.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/util/Interrupt.h"

// How scipy 1.10 evaluates zoom(grid_mode=True, mode='nearest') and map_coordinates(mode='nearest'),
// which is what nnU-Net's resampling runs on:
//  * output sample k of an axis n_in -> n_out sits at input coordinate (k + 0.5) * n_in / n_out - 0.5;
//  * orders 0 and 1 interpolate the samples directly; order 3 first pads the line by 12 copies of its
//    end samples and runs the cubic B-spline prefilter over the padded line with the half-sample
//    symmetric boundary start (scipy's 'reflect' initialisation, which it uses for 'nearest');
//  * taps that fall outside the (padded) line repeat its end sample;
//  * the N-D result is the tensor product of the 1-D weights over the N-D prefiltered coefficients. For
//    order 3 it is computed here as 1-D passes along each axis in turn, equal up to float64 summation
//    order; orders 0 and 1 are summed tap by tap in scipy's own order, bit for bit, because the float16
//    logits round from them and a float16 tie (a weight of exactly 0.5) goes whichever way the last
//    float64 bit says. (That presumes no fused multiply-add contraction, as on baseline x86-64.)

namespace medseg::nnunet {

namespace {

constexpr const char* kDefaultResamplingFunction = "resample_data_or_seg_to_shape";
constexpr int64_t kSplinePad = 12;  // scipy's pre-padding for 'nearest' before a prefilter
constexpr double kCubicPole = -0.26794919243112270647;  // sqrt(3) - 2, to the nearest double
constexpr int64_t kLinesPerTile = 32;  // lines filtered together, vectorised across the tile

int splineOrderKwarg(const nlohmann::json& value, const char* key) {
  if (!value.is_number_integer()) {
    throw InputError(std::string("nnU-Net resampling kwarg '") + key + "' must be an integer, got " + value.dump());
  }
  const int order = value.get<int>();
  if (order != 0 && order != 1 && order != 3) {
    throw InputError(std::string("nnU-Net resampling kwarg '") + key + "' is " + std::to_string(order) +
                     "; MedSeg implements spline orders 0, 1 and 3 (nnU-Net's defaults are 3 for images, "
                     "1 for probabilities and 0 along z)");
  }
  return order;
}

// ---- 1-D resampling along one axis ----

// Where each output sample of one axis reads its input: order + 1 taps (rows of the coefficient line,
// already clamped to it) and their B-spline weights.
struct AxisMap {
  int order = 0;
  int64_t nIn = 0;
  int64_t nOut = 0;
  int64_t pad = 0;  // rows of padding on each side of the coefficient line
  std::vector<int64_t> taps;
  std::vector<double> weights;
  int64_t lineLength() const { return nIn + 2 * pad; }
  int tapsPerSample() const { return order + 1; }
};

// (k + 0.5) * scale - 0.5 with both operations rounded separately, as numpy and scipy compute it: a
// fused multiply-add could move an order-0 coordinate across a rounding half.
double gridCoordinate(int64_t k, double scale) {
  volatile double scaled = (static_cast<double>(k) + 0.5) * scale;
  return scaled - 0.5;
}

// Centred B-spline weights for fractional offset x in [0, 1) (odd orders) or [-0.5, 0.5) (order 0).
void splineWeights(int order, double x, double* w) {
  if (order == 0) {
    w[0] = 1.0;
  } else if (order == 1) {
    w[0] = 1.0 - x;
    w[1] = 1.0 - w[0];  // the last weight completes the partition of unity, as scipy computes it
  } else {
    const double u = 1.0 - x;
    w[0] = u * u * u / 6.0;
    w[1] = (3.0 * x * x * x - 6.0 * x * x + 4.0) / 6.0;
    w[2] = (3.0 * u * u * u - 6.0 * u * u + 4.0) / 6.0;
    w[3] = 1.0 - w[0] - w[1] - w[2];
  }
}

AxisMap makeAxisMap(int64_t nIn, int64_t nOut, int order) {
  AxisMap map;
  map.order = order;
  map.nIn = nIn;
  map.nOut = nOut;
  map.pad = order > 1 ? kSplinePad : 0;
  const int taps = map.tapsPerSample();
  map.taps.resize(static_cast<size_t>(nOut * taps));
  map.weights.resize(map.taps.size());
  const double scale = static_cast<double>(nIn) / static_cast<double>(nOut);
  const int64_t last = map.lineLength() - 1;
  for (int64_t k = 0; k < nOut; ++k) {
    const double c = gridCoordinate(k, scale) + static_cast<double>(map.pad);
    // Odd orders start at floor(c), even ones at the nearest sample (order 0 rounds halves up).
    const double base = (order % 2 == 1) ? std::floor(c) : std::floor(c + 0.5);
    const int64_t start = static_cast<int64_t>(base) - order / 2;
    splineWeights(order, c - base, &map.weights[static_cast<size_t>(k * taps)]);
    for (int j = 0; j < taps; ++j) {
      map.taps[static_cast<size_t>(k * taps + j)] = std::clamp<int64_t>(start + j, 0, last);
    }
  }
  return map;
}

// Cubic B-spline prefilter of `width` interleaved lines (row r of line t at rows[r * width + t]) of
// `length` rows, with the half-sample symmetric boundary start that scipy uses for mode 'nearest'.
void cubicPrefilter(double* rows, int64_t length, int64_t width) {
  const double z = kCubicPole;
  const double gain = (1.0 - z) * (1.0 - 1.0 / z);
  for (int64_t i = 0; i < length * width; ++i) rows[i] *= gain;

  // Causal start: c0 + z / (1 - z^2L) * sum_i z^i (c_i + z^L c_{L-1-i}), the input mirrored about -0.5.
  const double zL = std::pow(z, static_cast<double>(length));
  std::vector<double> sum(static_cast<size_t>(width), 0.0);
  double zi = 1.0;
  for (int64_t i = 0; i < length; ++i) {
    const double* ci = rows + i * width;
    const double* mirrored = rows + (length - 1 - i) * width;
    for (int64_t t = 0; t < width; ++t) sum[t] += zi * (ci[t] + zL * mirrored[t]);
    zi *= z;
  }
  const double startFactor = z / (1.0 - zL * zL);
  for (int64_t t = 0; t < width; ++t) rows[t] += startFactor * sum[t];
  for (int64_t r = 1; r < length; ++r) {
    double* row = rows + r * width;
    const double* previous = row - width;
    for (int64_t t = 0; t < width; ++t) row[t] += z * previous[t];
  }
  // Anti-causal start for the same symmetric extension, then the backward recursion.
  double* lastRow = rows + (length - 1) * width;
  for (int64_t t = 0; t < width; ++t) lastRow[t] *= z / (z - 1.0);
  for (int64_t r = length - 2; r >= 0; --r) {
    double* row = rows + r * width;
    const double* next = row + width;
    for (int64_t t = 0; t < width; ++t) row[t] = z * (next[t] - row[t]);
  }
}

// A group of lines along the resampled axis: line t starts at base + t * lineStride and steps by
// axisStride, in the input and in the output.
struct LineTile {
  int64_t inBase, inLineStride, outBase, outLineStride, width;
};

void resampleTile(const double* in, double* out, const LineTile& tile, int64_t axisStride, const AxisMap& map,
                  std::vector<double>& rows) {
  const int64_t width = tile.width;
  const int64_t length = map.lineLength();
  rows.resize(static_cast<size_t>(length * width));
  for (int64_t r = 0; r < length; ++r) {
    const int64_t source = std::clamp<int64_t>(r - map.pad, 0, map.nIn - 1);  // edge padding
    const double* from = in + tile.inBase + source * axisStride;
    double* row = rows.data() + r * width;
    for (int64_t t = 0; t < width; ++t) row[t] = from[t * tile.inLineStride];
  }
  if (map.order == 3) cubicPrefilter(rows.data(), length, width);

  const int taps = map.tapsPerSample();
  std::vector<double> value(static_cast<size_t>(width));
  for (int64_t k = 0; k < map.nOut; ++k) {
    std::fill(value.begin(), value.end(), 0.0);
    for (int j = 0; j < taps; ++j) {
      const double w = map.weights[static_cast<size_t>(k * taps + j)];
      const double* row = rows.data() + map.taps[static_cast<size_t>(k * taps + j)] * width;
      for (int64_t t = 0; t < width; ++t) value[t] += w * row[t];
    }
    double* to = out + tile.outBase + k * axisStride;
    for (int64_t t = 0; t < width; ++t) to[t * tile.outLineStride] = value[t];
  }
}

// One channel being resampled, (z, y, x) order. Each pass writes into `scratch` and swaps it in; both
// buffers keep their capacity across passes and channels, so big passes do not fault in fresh pages.
struct WorkVolume {
  std::vector<double> values;
  std::vector<double> scratch;
  Shape3 shape{};

  double* passOutput(const Shape3& newShape) {
    scratch.resize(static_cast<size_t>(newShape[0] * newShape[1] * newShape[2]));
    return scratch.data();
  }
  void finishPass(const Shape3& newShape) {
    values.swap(scratch);
    shape = newShape;
  }
};

// Resamples axis `axis` to `size` samples with spline order `order`.
void resampleAxis(WorkVolume& volume, int axis, int64_t size, int order) {
  const AxisMap map = makeAxisMap(volume.shape[axis], size, order);
  int64_t outer = 1;
  int64_t inner = 1;
  for (int a = 0; a < axis; ++a) outer *= volume.shape[a];
  for (int a = axis + 1; a < 3; ++a) inner *= volume.shape[a];
  Shape3 newShape = volume.shape;
  newShape[axis] = size;
  const double* in = volume.values.data();
  double* out = volume.passOutput(newShape);

  // Innermost axis: tiles of consecutive lines; otherwise tiles of neighbouring columns of one slab, so
  // the rows gathered into a tile are contiguous in memory.
  const bool innermost = inner == 1;
  const int64_t tilesPerOuter = innermost ? 1 : (inner + kLinesPerTile - 1) / kLinesPerTile;
  const int64_t tiles = innermost ? (outer + kLinesPerTile - 1) / kLinesPerTile : outer * tilesPerOuter;
  at::parallel_for(0, tiles, 1, [&](int64_t begin, int64_t end) {
    std::vector<double> rows;
    for (int64_t i = begin; i < end; ++i) {
      LineTile tile{};
      if (innermost) {
        const int64_t first = i * kLinesPerTile;
        tile = {first * map.nIn, map.nIn, first * size, size, std::min(kLinesPerTile, outer - first)};
      } else {
        const int64_t o = i / tilesPerOuter;
        const int64_t column = (i % tilesPerOuter) * kLinesPerTile;
        tile = {o * map.nIn * inner + column, 1, o * size * inner + column, 1, std::min(kLinesPerTile, inner - column)};
      }
      resampleTile(in, out, tile, inner, map, rows);
    }
  });
  volume.finishPass(newShape);
}

// Orders 0 and 1 (no prefilter) in one go over all three axes: every output voxel adds its tap products
// ((c * wz) * wy) * wx from 0.0, z tap outermost, as scipy does. An axis left alone gets the identity map.
void evaluateTaps(WorkVolume& volume, const std::array<AxisMap, 3>& maps) {
  const Shape3 size{maps[0].nOut, maps[1].nOut, maps[2].nOut};
  const double* in = volume.values.data();
  double* out = volume.passOutput(size);
  const int64_t rowLength = volume.shape[2];
  const int64_t sliceStride = volume.shape[1] * volume.shape[2];
  const int tz = maps[0].tapsPerSample(), ty = maps[1].tapsPerSample(), tx = maps[2].tapsPerSample();
  at::parallel_for(0, size[0] * size[1], 1, [&](int64_t begin, int64_t end) {
    std::vector<double> scaled(static_cast<size_t>(rowLength));  // one input row times wz, then wy
    for (int64_t row = begin; row < end; ++row) {
      const int64_t z = row / size[1], y = row % size[1];
      double* sum = out + row * size[2];
      std::fill(sum, sum + size[2], 0.0);
      // Per output voxel the terms still arrive in scipy's order; only the row products are shared.
      for (int a = 0; a < tz; ++a) {
        const double wz = maps[0].weights[static_cast<size_t>(z * tz + a)];
        const double* slice = in + maps[0].taps[static_cast<size_t>(z * tz + a)] * sliceStride;
        for (int b = 0; b < ty; ++b) {
          const double wy = maps[1].weights[static_cast<size_t>(y * ty + b)];
          const double* line = slice + maps[1].taps[static_cast<size_t>(y * ty + b)] * rowLength;
          for (int64_t i = 0; i < rowLength; ++i) scaled[i] = line[i] * wz * wy;
          for (int64_t x = 0; x < size[2]; ++x) {
            for (int c = 0; c < tx; ++c) {
              const size_t i = static_cast<size_t>(x * tx + c);
              sum[x] += scaled[maps[2].taps[i]] * maps[2].weights[i];
            }
          }
        }
      }
    }
  });
  volume.finishPass(size);
}

// One scipy zoom of every axis except `keep` (-1: none) to newShape.
void zoomAxes(WorkVolume& volume, const Shape3& newShape, int order, int keep) {
  const Shape3& shape = volume.shape;
  if (order <= 1) {
    std::array<AxisMap, 3> maps;
    for (int a = 0; a < 3; ++a) {
      maps[a] = a == keep ? makeAxisMap(shape[a], shape[a], 0) : makeAxisMap(shape[a], newShape[a], order);
    }
    evaluateTaps(volume, maps);
    return;
  }
  // Shrinking axes first, the cheapest order. An equal-size axis is the identity up to float64 rounding
  // (the spline interpolates its samples), so it is skipped.
  std::array<int, 3> axes{0, 1, 2};
  std::stable_sort(axes.begin(), axes.end(), [&](int a, int b) {
    return static_cast<double>(newShape[a]) / shape[a] < static_cast<double>(newShape[b]) / shape[b];
  });
  for (int axis : axes) {
    if (axis != keep && shape[axis] != newShape[axis]) resampleAxis(volume, axis, newShape[axis], order);
  }
}

// ---- skimage's clip to the input range ----

struct ValueRange {
  double low = std::numeric_limits<double>::infinity();
  double high = -std::numeric_limits<double>::infinity();
  void include(double v) {  // NaNs are skipped, like numpy's nanmin / nanmax fallback in skimage
    if (v < low) low = v;
    if (v > high) high = v;
  }
  double clip(double v) const { return std::min(std::max(v, low), high); }
};

// Per-slice bounds along `axis` (slice s = all voxels with index s on that axis).
std::vector<ValueRange> sliceRanges(const std::vector<double>& volume, const Shape3& shape, int axis) {
  std::vector<ValueRange> bounds(static_cast<size_t>(shape[axis]));
  for (int64_t z = 0, i = 0; z < shape[0]; ++z) {
    for (int64_t y = 0; y < shape[1]; ++y) {
      for (int64_t x = 0; x < shape[2]; ++x, ++i) bounds[static_cast<size_t>(std::array{z, y, x}[axis])].include(volume[i]);
    }
  }
  return bounds;
}

void clipSlices(std::vector<double>& volume, const Shape3& shape, int axis, const std::vector<ValueRange>& bounds) {
  for (int64_t z = 0, i = 0; z < shape[0]; ++z) {
    for (int64_t y = 0; y < shape[1]; ++y) {
      for (int64_t x = 0; x < shape[2]; ++x, ++i) {
        volume[i] = bounds[static_cast<size_t>(std::array{z, y, x}[axis])].clip(volume[i]);
      }
    }
  }
}

// ---- the two paths of nnU-Net's resample_data_or_seg, per channel ----

// One skimage resize of the whole volume, clipped to the channel's range.
void resample3d(WorkVolume& volume, const Shape3& newShape, int order) {
  ValueRange bounds;
  for (double v : volume.values) bounds.include(v);
  zoomAxes(volume, newShape, order, -1);
  for (double& v : volume.values) v = bounds.clip(v);
}

// nnU-Net's separate-z path: a 2-D skimage resize of every slice across `axis` (each clipped to its own
// slice's range), then map_coordinates along `axis` with orderZ, unclipped.
void resampleSeparateZ(WorkVolume& volume, const Shape3& newShape, int axis, int order, int orderZ) {
  const std::vector<ValueRange> bounds = sliceRanges(volume.values, volume.shape, axis);
  bool inPlaneChanges = false;
  for (int a = 0; a < 3; ++a) inPlaneChanges |= a != axis && volume.shape[a] != newShape[a];
  // Unchanged slices: an identity resize (exact for orders 0 and 1, up to float64 rounding for order 3).
  if (inPlaneChanges) zoomAxes(volume, newShape, order, axis);
  clipSlices(volume.values, volume.shape, axis, bounds);
  if (volume.shape[axis] != newShape[axis]) resampleAxis(volume, axis, newShape[axis], orderZ);
}

// ---- output rounding ----

// float64 -> float16 rounded once, to nearest with ties to even, as numpy's astype does.
at::Half roundToHalf(double v) {
  // Through float32 first (fast, c10 rounds correctly from there) unless that could round twice: when
  // the float32 is inexact and lands exactly halfway between two float16 normals (dropped 13 bits
  // 1000...0), or in float16's subnormal range, where more bits are dropped.
  const float single = static_cast<float>(v);
  uint32_t bits = 0;
  std::memcpy(&bits, &single, sizeof bits);
  const bool halfway = (bits & 0x1FFFu) == 0x1000u;
  if (static_cast<double>(single) == v || (!halfway && std::fabs(single) >= 0x1p-14f)) return at::Half(single);
  if (!std::isfinite(v)) return at::Half(single);
  int exponent = 0;
  std::frexp(v, &exponent);  // |v| in [2^(exponent-1), 2^exponent)
  // float16 keeps 10 fraction bits; below its smallest normal exponent (-14) the step stays 2^-24.
  const double step = std::ldexp(1.0, std::max(exponent - 1, -14) - 10);
  double rounded = std::nearbyint(v / step) * step;
  if (std::fabs(rounded) > 65504.0) rounded = std::copysign(std::numeric_limits<double>::infinity(), v);
  return at::Half(static_cast<float>(rounded));  // exact: `rounded` is a float16 value
}

// One channel widened to float64, as nnU-Net's data.astype(float).
void loadChannel(const torch::Tensor& channel, WorkVolume& volume) {
  const torch::Tensor values = channel.contiguous();
  const auto n = static_cast<size_t>(values.numel());
  switch (values.scalar_type()) {
    case torch::kDouble:
      volume.values.assign(values.data_ptr<double>(), values.data_ptr<double>() + n);
      break;
    case torch::kFloat:
      volume.values.assign(values.data_ptr<float>(), values.data_ptr<float>() + n);
      break;
    default: {
      const at::Half* from = values.data_ptr<at::Half>();
      volume.values.resize(n);
      for (size_t i = 0; i < n; ++i) volume.values[i] = static_cast<float>(from[i]);
      break;
    }
  }
  volume.shape = {values.size(0), values.size(1), values.size(2)};
}

void storeChannel(const std::vector<double>& values, torch::Tensor channel) {
  const auto n = static_cast<int64_t>(values.size());
  switch (channel.scalar_type()) {
    case torch::kDouble:
      std::copy(values.begin(), values.end(), channel.data_ptr<double>());
      break;
    case torch::kFloat: {
      float* to = channel.data_ptr<float>();
      for (int64_t i = 0; i < n; ++i) to[i] = static_cast<float>(values[i]);
      break;
    }
    default: {
      at::Half* to = channel.data_ptr<at::Half>();
      for (int64_t i = 0; i < n; ++i) to[i] = roundToHalf(values[i]);
      break;
    }
  }
}

bool anisotropic(const Spacing3& spacing, double threshold) {
  return *std::max_element(spacing.begin(), spacing.end()) / *std::min_element(spacing.begin(), spacing.end()) >
         threshold;
}

// nnU-Net's get_lowres_axis: every axis whose spacing divides the largest to exactly 1.
std::vector<int> coarsestAxes(const Spacing3& spacing) {
  const double largest = *std::max_element(spacing.begin(), spacing.end());
  std::vector<int> axes;
  for (int a = 0; a < 3; ++a) {
    if (largest / spacing[a] == 1.0) axes.push_back(a);
  }
  return axes;
}

void checkResampleInput(const torch::Tensor& data, const Shape3& newShape) {
  if (data.dim() != 4) {
    throw InputError("nnU-Net resampling expects a [C, z, y, x] tensor, got " + std::to_string(data.dim()) +
                     " dimensions");
  }
  const auto type = data.scalar_type();
  if (type != torch::kFloat && type != torch::kDouble && type != torch::kHalf) {
    throw InputError(std::string("nnU-Net resampling expects float32, float64 or float16 data, got ") +
                     c10::toString(type));
  }
  for (int a = 0; a < 3; ++a) {
    if (newShape[a] < 1 || data.size(a + 1) < 1) {
      throw InputError("nnU-Net resampling needs non-empty shapes, got " + std::to_string(data.size(a + 1)) +
                       " -> " + std::to_string(newShape[a]) + " voxels on axis " + std::to_string(a));
    }
  }
}

}  // namespace

ResamplingSettings parseResamplingSettings(const std::string& functionName, const nlohmann::json& kwargs) {
  if (functionName != kDefaultResamplingFunction) {
    throw InputError("nnU-Net resampling function '" + functionName + "' is not supported: MedSeg runs only "
                     "nnU-Net's default '" + kDefaultResamplingFunction + "' (plans.json resampling_fn_data / "
                     "resampling_fn_probabilities); use nnU-Net itself for models planned with custom resampling");
  }
  if (!kwargs.is_null() && !kwargs.is_object()) {
    throw InputError("nnU-Net resampling kwargs must be a JSON object, got " + kwargs.dump());
  }
  ResamplingSettings settings;
  if (kwargs.is_null()) return settings;
  for (const auto& [key, value] : kwargs.items()) {
    if (key == "is_seg") {
      if (!value.is_boolean() || value.get<bool>()) {
        throw InputError("nnU-Net resampling kwarg 'is_seg' must be false for images and logits, got " +
                         value.dump());
      }
    } else if (key == "order") {
      settings.order = splineOrderKwarg(value, "order");
    } else if (key == "order_z") {
      settings.orderZ = splineOrderKwarg(value, "order_z");
    } else if (key == "force_separate_z") {
      if (!value.is_null() && !value.is_boolean()) {
        throw InputError("nnU-Net resampling kwarg 'force_separate_z' must be true, false or null, got " +
                         value.dump());
      }
      settings.forceSeparateZ = value.is_null() ? std::nullopt : std::optional<bool>(value.get<bool>());
    } else if (key == "separate_z_anisotropy_threshold") {
      if (!value.is_number()) {
        throw InputError("nnU-Net resampling kwarg 'separate_z_anisotropy_threshold' must be a number, got " +
                         value.dump());
      }
      settings.anisotropyThreshold = value.get<double>();
    } else {
      throw InputError("unknown keyword '" + key + "' for nnU-Net's " + kDefaultResamplingFunction +
                       " (known: is_seg, order, order_z, force_separate_z, separate_z_anisotropy_threshold)");
    }
  }
  return settings;
}

ResamplingSettings resamplingSettingsFromPlans(const nlohmann::json& configuration, ResamplingStage stage) {
  const std::string key = stage == ResamplingStage::Data ? "resampling_fn_data" : "resampling_fn_probabilities";
  const auto function = configuration.find(key);
  if (function == configuration.end() || !function->is_string()) {
    throw InputError("nnU-Net plans configuration has no string '" + key + "'");
  }
  const auto kwargs = configuration.find(key + "_kwargs");
  if (kwargs == configuration.end()) throw InputError("nnU-Net plans configuration has no '" + key + "_kwargs'");
  return parseResamplingSettings(function->get<std::string>(), *kwargs);
}

Shape3 targetShape(const Shape3& shape, const Spacing3& currentSpacing, const Spacing3& targetSpacing) {
  Shape3 result{};
  for (int a = 0; a < 3; ++a) {
    if (!(currentSpacing[a] > 0.0) || !(targetSpacing[a] > 0.0)) {
      throw InputError("nnU-Net resampling needs positive spacings, got " + std::to_string(currentSpacing[a]) +
                       " and target " + std::to_string(targetSpacing[a]) + " mm on axis " + std::to_string(a));
    }
    // nearbyint in the default rounding mode rounds halves to even, like Python's round().
    result[a] = static_cast<int64_t>(
        std::nearbyint(currentSpacing[a] / targetSpacing[a] * static_cast<double>(shape[a])));
  }
  return result;
}

SeparateZ separateZ(std::optional<bool> forceSeparateZ, const Spacing3& currentSpacing, const Spacing3& newSpacing,
                    double threshold) {
  std::vector<int> axes;
  if (forceSeparateZ.has_value()) {
    if (!*forceSeparateZ) return {};
    axes = coarsestAxes(currentSpacing);
  } else if (anisotropic(currentSpacing, threshold)) {
    axes = coarsestAxes(currentSpacing);
  } else if (anisotropic(newSpacing, threshold)) {
    axes = coarsestAxes(newSpacing);
  }
  // Two or three axes tied for the coarsest spacing (e.g. 0.24 x 1.25 x 1.25): nnU-Net resamples in 3-D.
  if (axes.size() != 1) return {};
  return {true, axes.front()};
}

torch::Tensor resampleData(const torch::Tensor& data, const Shape3& newShape, const Spacing3& currentSpacing,
                           const Spacing3& newSpacing, const ResamplingSettings& settings) {
  checkResampleInput(data, newShape);
  const Shape3 shape{data.size(1), data.size(2), data.size(3)};
  if (shape == newShape) return data;

  const SeparateZ split = separateZ(settings.forceSeparateZ, currentSpacing, newSpacing, settings.anisotropyThreshold);
  const torch::Tensor input = data.cpu();
  torch::Tensor output = torch::empty({data.size(0), newShape[0], newShape[1], newShape[2]},
                                      torch::TensorOptions().dtype(data.scalar_type()));
  WorkVolume volume;
  for (int64_t c = 0; c < data.size(0); ++c) {
    loadChannel(input[c], volume);
    if (split.separate) {
      resampleSeparateZ(volume, newShape, split.axis, settings.order, settings.orderZ);
    } else {
      resample3d(volume, newShape, settings.order);
    }
    storeChannel(volume.values, output[c]);
  }
  return output;
}

}  // namespace medseg::nnunet
