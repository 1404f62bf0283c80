#!/usr/bin/python3
"""Reference results for plugins/nnunet/NnunetResampling (tests/plugins/nnunet/NnunetResamplingTest.cpp).

Resamples small deterministic arrays the way nnU-Net v2.5.2's default resampling does, with Debian 12's own
scikit-image 0.19.3 and scipy 1.10.1 (python3-skimage, python3-scipy):
  * work in float64, give the result the input's dtype (numpy's rounding);
  * 3-D: per channel skimage.transform.resize(order, mode='edge', anti_aliasing=False), default clip;
  * separately along one coarse axis: that 2-D resize of every slice across the axis, then
    scipy.ndimage.map_coordinates(order=order_z, mode='nearest') along the axis at (i + 0.5) * n_in / n_out - 0.5.
The inputs come from a hash both sides compute (see field()), so only the results are stored:
resampling_reference.json (the cases) and one <case>.f64 each (little-endian float64, C order (C, z, y, x)).

  /usr/bin/python3 tests/data/nnunet/reference/make_resampling_reference.py
"""
import json
import os

import numpy as np
from scipy.ndimage import map_coordinates
from skimage.transform import resize

HERE = os.path.dirname(os.path.abspath(__file__))

# name, channels, input shape, output shape, current / new spacing, order, order_z, force_separate_z,
# expected separate axis (None = 3-D), dtype, seed
CASES = [
    ('cubic3d', 2, (9, 11, 7), (13, 8, 10), (1.0, 0.9, 1.3), (0.7, 1.24, 0.91), 3, 0, None, None, 'float64', 1),
    ('linear3d', 1, (9, 11, 7), (13, 8, 10), (1.0, 0.9, 1.3), (0.7, 1.24, 0.91), 1, 0, None, None, 'float64', 2),
    ('logits_linear3d_half', 1, (13, 8, 10), (9, 11, 7), (0.7, 1.24, 0.91), (1.0, 0.9, 1.3), 1, 0, None, None,
     'float16', 35),  # seed 35: one value where rounding via float32 would miss the float16 numpy gives
    ('separate_z_in', 1, (4, 9, 7), (14, 11, 5), (3.5, 1.0, 1.0), (1.0, 0.8, 1.3), 3, 0, None, 0, 'float64', 4),
    ('logits_separate_z_half', 1, (14, 11, 5), (4, 9, 7), (1.0, 0.8, 1.3), (3.5, 1.0, 1.0), 1, 0, None, 0,
     'float16', 5),
    ('separate_x_cubic_z', 1, (8, 7, 4), (9, 6, 16), (1.0, 1.0, 4.0), (0.9, 1.1, 1.0), 1, 3, None, 2, 'float64', 6),
    ('forced_separate_y', 1, (6, 5, 7), (6, 10, 10), (1.0, 2.0, 1.5), (1.0, 1.0, 1.0), 3, 0, True, 1, 'float64', 7),
]


def field(seed, channels, shape):
    """Values (c + 1) * (k / 128 - 8), k in [0, 2048) from a multiplicative hash of the flat index: exact in
    float16, float32 and float64."""
    count = channels * int(np.prod(shape))
    n = np.arange(count, dtype=np.uint64)
    h = ((n + np.uint64(1)) * np.uint64(2654435761) + np.uint64(seed * 97531)) & np.uint64(0xFFFFFFFF)
    k = ((h >> np.uint64(11)) & np.uint64(2047)).astype(np.float64)
    values = (k / 128.0 - 8.0).reshape(channels, *shape)
    return values * (np.arange(channels, dtype=np.float64) + 1.0)[:, None, None, None]


def resample_channel_separately(volume, new_shape, axis, order, order_z):
    moved = np.moveaxis(volume, axis, 0)
    plane_shape = tuple(s for a, s in enumerate(new_shape) if a != axis)
    planes = np.stack([resize(plane, plane_shape, order=order, mode='edge', anti_aliasing=False)
                       for plane in moved])
    planes = np.moveaxis(planes, 0, axis)
    if planes.shape[axis] == new_shape[axis]:
        return planes
    grids = np.meshgrid(*[np.arange(s, dtype=np.float64) for s in new_shape], indexing='ij')
    scale = planes.shape[axis] / new_shape[axis]
    grids[axis] = scale * (grids[axis] + 0.5) - 0.5
    return map_coordinates(planes, np.array(grids), order=order_z, mode='nearest')


def resample(data, new_shape, axis, order, order_z):
    work = data.astype(np.float64)
    out = np.empty((data.shape[0], *new_shape), dtype=data.dtype)
    for c in range(data.shape[0]):
        if axis is None:
            out[c] = resize(work[c], new_shape, order=order, mode='edge', anti_aliasing=False)
        else:
            out[c] = resample_channel_separately(work[c], new_shape, axis, order, order_z)
    return out


def main():
    manifest = []
    for (name, channels, shape, new_shape, current, new, order, order_z, force, axis, dtype, seed) in CASES:
        data = field(seed, channels, shape).astype(dtype)
        result = resample(data, new_shape, axis, order, order_z)
        result.astype('<f8').tofile(os.path.join(HERE, f'{name}.f64'))
        manifest.append(dict(name=name, channels=channels, shape=list(shape), new_shape=list(new_shape),
                             current_spacing=list(current), new_spacing=list(new), order=order, order_z=order_z,
                             force_separate_z=force, separate_axis=axis, dtype=dtype, seed=seed))
    with open(os.path.join(HERE, 'resampling_reference.json'), 'w') as f:
        lines = ',\n  '.join(json.dumps(case) for case in manifest)
        f.write(f'{{"generator": "make_resampling_reference.py",\n "cases": [\n  {lines}\n ]\n}}\n')


if __name__ == '__main__':
    main()
