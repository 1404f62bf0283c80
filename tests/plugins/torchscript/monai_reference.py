"""A reference for MedSeg's MONAI bundle runner, written from MONAI 1.4's definitions with numpy, torch and
PyYAML only (MONAI itself is not installed): the config as monai.bundle's ConfigParser builds it (files
merged, macros, relative ids, references, "$" expressions evaluated by Python's eval, lambdas included),
the transforms, the inferers and the post-processing the tests' own bundles use, each after the MONAI (or
nibabel, skimage) function named in its docstring.

    python3 monai_reference.py BUNDLE IMAGE.nii.gz OUT [--roi-size X,Y,Z] [--config A.json,B.yaml]

writes OUT.raw (the label map, uint8, x fastest, on the image's grid) and OUT.json (the network grid, the
number of windows, the labels found). --roi-size replaces the inferer's roi_size (in the network's axis
order); --config names the config files to merge, from the bundle folder (default: configs/inference.*).
"""
import copy
import gzip
import itertools
import json
import math
import os
import re
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F
import yaml

AFFINE_TOL = 1e-3  # monai/data/utils.py


def read_nifti(path):
    """The voxels [C, X, Y, Z] and the affine as nibabel gives them (sform when its code is set, else qform)."""
    raw = gzip.open(path).read() if path.endswith(".gz") else open(path, "rb").read()
    e = "<" if struct.unpack("<i", raw[:4])[0] == 348 else ">"
    dim = struct.unpack(e + "8h", raw[40:56])
    datatype = struct.unpack(e + "h", raw[70:72])[0]
    pixdim = struct.unpack(e + "8f", raw[76:108])
    offset = int(struct.unpack(e + "f", raw[108:112])[0])
    slope, inter = struct.unpack(e + "2f", raw[112:120])
    qcode, scode = struct.unpack(e + "2h", raw[252:256])
    if scode > 0:
        affine = np.eye(4)
        affine[:3] = np.array(struct.unpack(e + "12f", raw[280:328]), dtype=np.float64).reshape(3, 4)
    else:
        b, c, d, qx, qy, qz = struct.unpack(e + "6f", raw[256:280])
        a = math.sqrt(max(0.0, 1.0 - (b * b + c * c + d * d)))
        r = np.array([[a * a + b * b - c * c - d * d, 2 * (b * c - a * d), 2 * (b * d + a * c)],
                      [2 * (b * c + a * d), a * a + c * c - b * b - d * d, 2 * (c * d - a * b)],
                      [2 * (b * d - a * c), 2 * (c * d + a * b), a * a + d * d - c * c - b * b]])
        zooms = np.array(pixdim[1:4], dtype=np.float64)
        if pixdim[0] < 0:
            zooms[2] = -zooms[2]
        affine = np.eye(4)
        affine[:3, :3] = r * zooms
        affine[:3, 3] = [qx, qy, qz]
    nx, ny, nz = dim[1], dim[2], dim[3]
    channels = int(np.prod([max(1, v) for v in dim[4:dim[0] + 1]])) if dim[0] > 3 else 1
    dtype = {2: np.uint8, 4: np.int16, 8: np.int32, 16: np.float32, 64: np.float64, 256: np.int8, 512: np.uint16}[datatype]
    data = np.frombuffer(raw, dtype=np.dtype(dtype).newbyteorder(e), count=nx * ny * nz * channels, offset=offset)
    data = data.reshape((channels, nz, ny, nx)).transpose(0, 3, 2, 1).astype(np.float32)
    if slope not in (0.0, 1.0) or inter != 0.0:
        data = data * slope + inter
    return torch.from_numpy(np.ascontiguousarray(data)), affine


# --- nibabel.orientations -------------------------------------------------------------------------

def io_orientation(affine):
    rzs = affine[:3, :3]
    zooms = np.sqrt(np.sum(rzs * rzs, axis=0))
    zooms[zooms == 0] = 1
    rs = rzs / zooms
    p, s, qs = np.linalg.svd(rs, full_matrices=False)
    keep = s > s.max() * 3 * np.finfo(s.dtype).eps
    r = p[:, keep] @ qs[keep]
    ornt = np.full((3, 2), np.nan)
    for axis in range(3):
        column = r[:, axis]
        if not np.allclose(column, 0):
            world = int(np.argmax(np.abs(column)))
            ornt[axis] = [world, -1 if column[world] < 0 else 1]
            r[world, :] = 0
    return ornt


LABELS = (("L", "R"), ("P", "A"), ("I", "S"))


def axcodes2ornt(codes):
    ornt = np.full((len(codes), 2), np.nan)
    for i, code in enumerate(codes):
        for world, (low, high) in enumerate(LABELS):
            if code == high:
                ornt[i] = [world, 1]
            elif code == low:
                ornt[i] = [world, -1]
    return ornt


def ornt2axcodes(ornt):
    return "".join(LABELS[int(world)][1 if sign == 1 else 0] for world, sign in ornt)


def ornt_transform(start, end):
    result = np.empty_like(start)
    for i, (world, sign) in enumerate(start):
        for j in range(len(end)):
            if end[j, 0] == world:
                result[i] = [j, 1 if sign == end[j, 1] else -1]
    return result


def inv_ornt_aff(ornt, shape):
    p = ornt.shape[0]
    shape = np.array(shape)[:p]
    undo_reorder = np.eye(p + 1)[[int(v) for v in ornt[:, 0]] + [p], :]
    undo_flip = np.diag(list(ornt[:, 1]) + [1.0])
    centre = -(shape - 1) / 2.0
    undo_flip[:p, p] = ornt[:, 1] * centre - centre
    return undo_flip @ undo_reorder


# --- monai/data/utils.py ------------------------------------------------------------------------------

def affine_to_spacing(affine):
    s = np.sqrt(np.sum(affine[:3, :3] ** 2, axis=0))
    s[s == 0] = 1.0
    return s


def zoom_affine(affine, scale, diagonal):
    norm = affine_to_spacing(affine)
    scale = np.array([v if v and v > 0 else n for v, n in zip(scale, norm)], dtype=float)
    scale[scale == 0] = 1.0
    if diagonal:
        return np.diag(np.append(scale, [1.0]))
    rzs = affine[:-1, :-1]
    zs = np.linalg.cholesky(rzs.T @ rzs).T
    rotation = rzs @ np.linalg.inv(zs)
    s = np.sign(np.diag(zs)) * np.abs(scale)
    out = np.eye(4)
    out[:-1, :-1] = rotation @ np.diag(s)
    return out


def compute_shape_offset(shape, in_affine, out_affine, scale_extent):
    shape = np.array(shape, dtype=float)
    coords = [(-0.5, d - 0.5) if scale_extent else (0.0, d - 1.0) for d in shape]
    corners = np.asarray(np.meshgrid(*coords, indexing="ij")).reshape((3, -1))
    corners = np.concatenate((corners, np.ones_like(corners[:1])))
    corners_out = np.linalg.solve(out_affine, in_affine) @ corners
    corners = in_affine @ corners
    all_dist = corners_out[:-1].copy()
    corners_out = corners_out[:-1] / corners_out[-1]
    extent = np.ptp(corners_out, axis=1)
    out_shape = np.round(extent) if scale_extent else np.round(extent + 1.0)
    offset = None
    for i in range(corners.shape[1]):
        low = np.min(all_dist - all_dist[:, i:i + 1], 1)
        if np.allclose(low, 0.0, rtol=AFFINE_TOL):
            offset = corners[:-1, i]
            break
    if offset is None:
        offset = in_affine[:-1, :-1] @ (shape / 2.0) + in_affine[:-1, -1] - out_affine[:-1, :-1] @ (out_shape / 2.0)
    if scale_extent:
        in_offset = np.append(0.5 * (shape / out_shape - 1.0), 1.0)
        offset = np.abs((in_affine @ in_offset / in_offset[-1])[:-1]) * np.sign(offset)
    return out_shape.astype(int), offset


def compute_importance_map(patch, mode, sigma_scale):
    if mode == "constant":
        return torch.ones(patch, dtype=torch.float)
    sigma_scale = sigma_scale if isinstance(sigma_scale, (list, tuple)) else [sigma_scale] * len(patch)
    sigmas = [n * s for n, s in zip(patch, sigma_scale)]
    for i, n in enumerate(patch):
        x = torch.arange(start=-(n - 1) / 2.0, end=(n - 1) / 2.0 + 1, dtype=torch.float)
        x = torch.exp(x ** 2 / (-2 * sigmas[i] ** 2))
        weights = weights.unsqueeze(-1) * x[(None,) * i] if i > 0 else x
    low = max(torch.min(weights).item(), 1e-3)
    return torch.clamp_(weights.to(torch.float), min=low)


def dense_patch_starts(image_size, patch, interval):
    starts = []
    for size, p, step in zip(image_size, patch, interval):
        count = int(math.ceil(float(size) / step))
        last = next((d for d in range(count) if d * step + p >= size), None)
        count = last + 1 if last is not None else 1
        starts.append([i * step - max(i * step + p - size, 0) for i in range(count)])
    return list(itertools.product(*starts))


# --- monai/transforms/spatial: Orientation, Spacing and their spatial_resample --------------------------

def normalising(shape):
    shape = np.array(shape, dtype=np.float64)
    norm = shape.copy()
    norm[norm <= 0.0] = 2.0
    out = np.diag(np.append(2.0 / norm, 1.0))
    out[:-1, -1] = 1.0 / shape - 1.0
    return out


def spatial_resample(img, src, dst, size, mode, padding, align_corners, dtype):
    size = [int(v) for v in size]
    xform = np.linalg.solve(src, dst)
    same = list(img.shape[1:]) == size
    if same and (np.allclose(src, dst, atol=AFFINE_TOL) or np.allclose(xform, np.eye(4), atol=AFFINE_TOL)):
        return img.float(), src
    theta = normalising(img.shape[1:]) @ xform @ np.linalg.inv(normalising(size))
    theta = torch.as_tensor(theta, dtype=dtype)[None]
    theta[:, :3] = theta[:, [2, 1, 0]]
    theta[:, :, :3] = theta[:, :, [2, 1, 0]]
    grid = F.affine_grid(theta[:, :3], [1, img.shape[0]] + size, align_corners=align_corners)
    out = F.grid_sample(img[None].to(dtype), grid, mode=mode, padding_mode=padding, align_corners=align_corners)
    return out[0].float(), dst


def orientation(img, affine, axcodes):
    spatial = ornt_transform(io_orientation(affine), axcodes2ornt(axcodes))
    xform = inv_ornt_aff(spatial, img.shape[1:])
    flips = [i + 1 for i in range(3) if spatial[i, 1] == -1]
    out = torch.flip(img, dims=flips) if flips else img
    out = out.permute([0] + [int(i) + 1 for i in np.argsort(spatial[:, 0])])
    return out.contiguous(), affine @ xform


def spacing(img, affine, t):
    pixdim = list(t["pixdim"]) if isinstance(t["pixdim"], (list, tuple)) else [t["pixdim"]]
    out_d = np.array(pixdim[:3] + [pixdim[-1]] * (3 - len(pixdim[:3])), dtype=np.float64)
    original = affine_to_spacing(affine)
    lows = np.array(np.atleast_1d(t.get("min_pixdim", np.nan)), dtype=np.float64)
    highs = np.array(np.atleast_1d(t.get("max_pixdim", np.nan)), dtype=np.float64)
    for i in range(3):
        target = out_d[i]
        mn = lows[i] if i < len(lows) else np.nan
        mx = highs[i] if i < len(highs) else np.nan
        mn = target if np.isnan(mn) else min(mn, target)
        mx = target if np.isnan(mx) else max(mx, target)
        out_d[i] = original[i] if (mn - AFFINE_TOL) <= original[i] <= (mx + AFFINE_TOL) else target
    new = zoom_affine(affine, out_d, t.get("diagonal", False))
    shape, offset = compute_shape_offset(img.shape[1:], affine, new, t.get("scale_extent", False))
    new[:3, -1] = offset
    dtype = by_key(t, "dtype", np.float64)
    how = dict(mode=by_key(t, "mode", "bilinear"), padding=by_key(t, "padding_mode", "border"),
               align_corners=by_key(t, "align_corners", False),
               dtype=torch.float64 if dtype in ("float64", np.float64, torch.float64) else torch.float32)
    out, out_affine = spatial_resample(img, affine, new, shape, **how)
    return out, out_affine, how


def by_key(t, name, default, key="image"):
    """A dictionary transform's argument given per key (ensure_tuple_rep over its keys): the entry of `key`."""
    value = t.get(name, default)
    if not isinstance(value, (list, tuple)):
        return value
    keys = t["keys"] if isinstance(t["keys"], (list, tuple)) else [t["keys"]]
    return value[keys.index(key)] if len(value) == len(keys) else value


def crop_foreground(img, affine, t):
    """monai/transforms/croppad/array.py CropForeground with generate_spatial_bounding_box."""
    found = (img > 0).any(0)
    margin = t.get("margin", 0)
    margin = margin if isinstance(margin, list) else [margin] * 3
    k = t.get("k_divisible", 1)
    k = k if isinstance(k, list) else [k] * 3
    start, end = [], []
    for axis in range(3):
        others = tuple(a for a in range(3) if a != axis)
        where = torch.nonzero(found.any(others[1]).any(others[0])).flatten()
        lo, hi = int(where[0]) - margin[axis], int(where[-1]) + margin[axis] + 1
        if t.get("allow_smaller", True):
            lo, hi = max(lo, 0), min(hi, img.shape[axis + 1])
        size = hi - lo
        grown = int(math.ceil(size / k[axis]) * k[axis]) if k[axis] > 0 else size
        lo -= (grown - size) // 2
        start.append(lo)
        end.append(lo + grown)
    inside = [slice(max(s, 0), min(e, n)) for s, e, n in zip(start, end, img.shape[1:])]
    out = img[(slice(None), *inside)]
    pad = []
    for axis in (2, 1, 0):
        pad += [max(-start[axis], 0), max(end[axis] - img.shape[axis + 1], 0)]
    if any(pad):
        out = F.pad(out, pad, mode="constant", value=0.0)
    shifted = affine.copy()
    shifted[:3, 3] += affine[:3, :3] @ np.array(start, dtype=np.float64)
    return out.contiguous(), shifted, (start, list(img.shape[1:]))


# --- monai/bundle: the config as ConfigParser builds it ----------------------------------------------

SEP = "::"


def load_config(path):
    """ConfigParser.load_config_file: JSON, or YAML with PyYAML's safe loader."""
    with open(path) as f:
        return yaml.safe_load(f) if path.lower().endswith((".yaml", ".yml")) else json.load(f)


def split_id(id):
    return str(id).replace("#", SEP).split(SEP)


def get_item(config, id):
    for k in (split_id(id) if id != "" else []):
        config = config[k] if isinstance(config, dict) else config[int(k)]
    return config


def merge_files(paths):
    """load_config_files + utils.merge_kv: later files set items by id; "+id" merges."""
    config = {}
    for path in paths:
        for k, v in load_config(path).items():
            if k.startswith("+") and has_item(config, k[1:]):
                target = get_item(config, k[1:])
                target.update(v) if isinstance(target, dict) else target.extend(v)
                continue
            k = k.lstrip("+")
            *parent, last = split_id(k)
            holder = get_item(config, SEP.join(parent)) if parent else config
            holder[last if isinstance(holder, dict) else int(last)] = v
    return config


def has_item(config, id):
    try:
        get_item(config, id)
        return True
    except (KeyError, IndexError, ValueError):
        return False


def absolute(value, id):
    """ConfigParser.resolve_relative_ids: "@##x" at a::b::c is "@a::x"."""
    value = value.replace("#", SEP)
    here = id.split(SEP)
    for prefix in sorted(set(re.findall(r"(?:@|%)(?:::)+", value)), reverse=True):
        levels = prefix[1:].count(SEP)
        base = "" if levels == len(here) else SEP.join(here[:-levels]) + SEP
        value = value.replace(prefix, prefix[0] + base)
    return value


def macros(config, root, node=None, id=""):
    """ConfigParser._do_resolve: relative ids made absolute, "%file::id" / "%id" replaced by copies."""
    node = config if node is None else node
    if isinstance(node, (dict, list)):
        for k, v in (node.items() if isinstance(node, dict) else enumerate(node)):
            node[k] = macros(config, root, v, f"{id}{SEP}{k}" if id else f"{k}")
    if isinstance(node, str):
        node = absolute(node, id)
        if node.startswith("%"):
            found = re.findall(r"(.*\.(json|yaml|yml))(?=(?:::.*)|$)", node[1:], re.IGNORECASE)
            path, target = (found[0][0], node[1 + len(found[0][0]):].removeprefix(SEP)) if found else ("", node[1:])
            source = load_config(os.path.join(root, path)) if path else config
            return copy.deepcopy(get_item(source, target))
    return node


def disabled(item):
    flag = item.get("_disabled_", False) if isinstance(item, dict) and "_target_" in item else False
    return flag.lower().strip() == "true" if isinstance(flag, str) else bool(flag)


class Component(dict):
    """A component's arguments, each resolved when it is read, as MONAI resolves only what it instantiates."""

    def __init__(self, raw, resolver):
        super().__init__(raw)
        self.resolver = resolver

    def __getitem__(self, key):
        return self.resolver.value(super().__getitem__(key))

    def get(self, key, default=None):
        return self[key] if key in self else default


class Resolver:
    """ReferenceResolver without instantiation: components stay dicts of their resolved arguments,
    "$" expressions are evaluated by Python's eval as ConfigExpression evaluates them, "@id" is the item."""

    def __init__(self, config):
        self.config = config

    def item(self, id):
        return self.value(get_item(self.config, id))

    def value(self, node):
        if isinstance(node, dict) and "_target_" in node:
            return Component({k: v for k, v in node.items() if not disabled(v)}, self)
        if isinstance(node, dict):
            return {k: self.value(v) for k, v in node.items() if not disabled(v)}
        if isinstance(node, list):
            return [self.value(v) for v in node if not disabled(v)]
        if isinstance(node, str) and node.startswith("$"):
            refs = {}
            def swap(match):
                refs[match.group(0)[1:]] = self.item(match.group(0)[1:])
                return f"__refs['{match.group(0)[1:]}']"
            code = re.sub(r"@\w*(?:::\w*)*", swap, node[1:].replace("#", SEP))
            return eval(code, {"torch": torch, "np": np, "numpy": np, "__refs": refs})
        if isinstance(node, str) and re.fullmatch(r"@\w*(?:::\w*)*", node.replace("#", SEP)):
            return self.item(node[1:])
        return node


def name_of(component):
    return component["_target_"].split(".")[-1]


def transforms_of(section):
    return section["transforms"] if isinstance(section, dict) else section


def preprocess(img, affine, config, key):
    applied = []  # what Invertd needs, in order
    for t in transforms_of(config["preprocessing"]):
        name = name_of(t)
        if name == "Orientationd":
            before = affine
            img, affine = orientation(img, affine, "RAS" if t.get("as_closest_canonical") else t["axcodes"])
            applied.append(("orientation", before))
        elif name == "Spacingd":
            before, size = affine, list(img.shape[1:])
            img, affine, how = spacing(img, affine, t)
            applied.append(("spacing", before, size, how))
        elif name == "ScaleIntensityRanged":
            img = (img - t["a_min"]) / (t["a_max"] - t["a_min"])
            if t.get("b_min") is not None and t.get("b_max") is not None:
                img = img * (t["b_max"] - t["b_min"]) + t["b_min"]
            if t.get("clip"):
                img = torch.clamp(img, t.get("b_min"), t.get("b_max"))
        elif name == "CropForegroundd":
            before = affine
            img, affine, box = crop_foreground(img, affine, t)
            applied.append(("crop", before, box))
        elif name == "ScaleIntensityd":
            img = scale_intensity(img, t)
        elif name == "NormalizeIntensityd":
            img = normalize_intensity(img, t)
        elif name == "CastToTyped":
            img = img.to(t.get("dtype", torch.float32))
        elif name in ("LoadImaged", "EnsureChannelFirstd", "EnsureTyped", "ToTensord"):
            pass
        else:
            raise SystemExit(f"the reference does not run {name}")
    return img.float(), affine, applied


def rescale_array(arr, minv, maxv):
    """monai/transforms/utils.py rescale_array."""
    lo, hi = arr.min(), arr.max()
    if lo == hi:
        return arr * minv if minv is not None else arr
    norm = (arr - lo) / (hi - lo)
    return norm if minv is None or maxv is None else norm * (maxv - minv) + minv


def scale_intensity(img, t):
    """intensity/array.py ScaleIntensity (minv 0, maxv 1 by default)."""
    minv, maxv, factor = t.get("minv", 0.0), t.get("maxv", 1.0), t.get("factor")
    if minv is not None or maxv is not None:
        if t.get("channel_wise", False):
            return torch.stack([rescale_array(c, minv, maxv) for c in img])
        return rescale_array(img, minv, maxv)
    return img * (1 + factor) if factor is not None else img


def normalize_one(img, nonzero, sub, div):
    """intensity/array.py NormalizeIntensity._normalize: mean and population std of the voxels chosen."""
    img = img.clone().float()
    chosen = img != 0 if nonzero else torch.ones_like(img, dtype=torch.bool)
    if not chosen.any():
        return img
    values = img[chosen]
    sub = torch.mean(values) if sub is None else sub
    div = torch.std(values, unbiased=False) if div is None else div
    div = 1.0 if float(div) == 0.0 else div
    img[chosen] = (values - sub) / div
    return img


def normalize_intensity(img, t):
    nonzero, sub, div = bool(t.get("nonzero", False)), t.get("subtrahend"), t.get("divisor")
    if bool(t.get("channel_wise", False)):
        return torch.stack([normalize_one(c, nonzero, None if sub is None else sub[i], None if div is None else div[i])
                            for i, c in enumerate(img)])
    return normalize_one(img, nonzero, sub, div)


def slice_inferer(inputs, network, t, roi_override):
    """inferers/inferer.py SliceInferer: a 2-D roi_size gets 1 at spatial_dim; the network sees 2-D slices."""
    axis = t.get("spatial_dim", 0)
    roi = list(roi_override or t["roi_size"])
    roi.insert(axis, 1)
    wrapped = lambda x: network(x.squeeze(axis + 2)).unsqueeze(axis + 2)
    return sliding_window(inputs, wrapped, dict(t, roi_size=roi), None)


def sliding_window(inputs, predictor, t, roi_override):
    """monai/inferers/utils.py sliding_window_inference (not buffered), batch of one."""
    roi = roi_override or t["roi_size"]
    roi = list(roi) if isinstance(roi, (list, tuple)) else [roi] * 3
    image_size_ = list(inputs.shape[2:])
    roi = [r if r and r > 0 else s for r, s in zip(roi, image_size_)]
    image_size = [max(s, r) for s, r in zip(image_size_, roi)]
    pad = []
    for k in range(4, 1, -1):
        diff = max(roi[k - 2] - inputs.shape[k], 0)
        pad += [diff // 2, diff - diff // 2]
    mode = t.get("padding_mode", "constant")
    if any(pad):
        inputs = F.pad(inputs, pad, mode=mode, value=t.get("cval", 0.0)) if mode == "constant" else F.pad(inputs, pad, mode=mode)
    overlap = t.get("overlap", 0.25)
    interval = [r if r == s else max(int(r * (1 - overlap)), 1) for s, r in zip(image_size, roi)]
    starts = dense_patch_starts(image_size, roi, interval)
    weights = compute_importance_map(roi, t.get("mode", "constant"), t.get("sigma_scale", 0.125))
    output, count = None, torch.zeros([1, 1] + image_size)
    windows = [tuple(slice(s, s + r) for s, r in zip(start, roi)) for start in starts]
    for w in windows:
        count[(slice(None), slice(None), *w)] += weights
    batch = t.get("sw_batch_size", 1)
    for first in range(0, len(windows), batch):
        chunk = windows[first:first + batch]
        out = predictor(torch.cat([inputs[(slice(None), slice(None), *w)] for w in chunk]))
        if output is None:
            output = torch.zeros([1, out.shape[1]] + image_size)
        for p, w in zip(out, chunk):
            output[(slice(None), slice(None), *w)] += p * weights
    output /= count
    keep = tuple(slice(pad[2 * (2 - a)], pad[2 * (2 - a)] + image_size_[a]) for a in range(3))
    return output[(slice(None), slice(None), *keep)], len(windows)


def invert(pred, affine, applied, nearest):
    """Invertd: the applied spatial transforms undone in reverse (nearest_interp: nearest, align_corners False)."""
    for step in reversed(applied):
        if step[0] == "crop":
            before, (start, size) = step[1], step[2]
            full = torch.zeros([pred.shape[0]] + size)
            src = [slice(max(0, -s), min(pred.shape[a + 1], n - s)) for a, (s, n) in enumerate(zip(start, size))]
            dst = [slice(max(0, s), min(n, s + pred.shape[a + 1])) for a, (s, n) in enumerate(zip(start, size))]
            full[(slice(None), *dst)] = pred[(slice(None), *src)]
            pred, affine = full, before
        elif step[0] == "spacing":
            before, size, how = step[1], step[2], dict(step[3])
            if nearest:
                how["mode"], how["align_corners"] = "nearest", False
            pred, affine = spatial_resample(pred, affine, before, size, **how)
        else:  # Orientation(axcodes of the original affine) on the prediction as it is now
            pred, affine = orientation(pred, affine, ornt2axcodes(io_orientation(step[1])))
    return pred


# --- monai/transforms/post ---------------------------------------------------------------------------

def label_components(foreground, connectivity):
    """skimage.measure.label's numbering: components (up to `connectivity` orthogonal hops) numbered 1.. in the
    raster order of their first voxel. Each voxel takes the least raster index it reaches, until nothing changes."""
    n = foreground.numel()
    far = float(n)
    index = torch.arange(n, dtype=torch.float64).reshape(foreground.shape)
    reach = torch.where(foreground, index, torch.full_like(index, far))
    steps = [d for d in itertools.product((-1, 0, 1), repeat=3) if 0 < sum(map(abs, d)) <= connectivity]
    size = foreground.shape
    while True:
        padded = F.pad(reach[None, None], (1, 1, 1, 1, 1, 1), value=far)[0, 0]
        best = reach
        for dx, dy, dz in steps:
            best = torch.minimum(best, padded[1 + dx:1 + dx + size[0], 1 + dy:1 + dy + size[1], 1 + dz:1 + dz + size[2]])
        best = torch.where(foreground, best, torch.full_like(best, far))
        if torch.equal(best, reach):
            break
        reach = best
    firsts = torch.unique(reach[foreground])
    labels = torch.zeros(size, dtype=torch.long)
    labels[foreground] = torch.searchsorted(firsts, reach[foreground]) + 1
    return labels, len(firsts)


def largest_component_mask(foreground, connectivity, count):
    """utils.py get_largest_connected_component_mask."""
    features, found = label_components(foreground, connectivity or 3)
    if found <= count:
        return foreground.clone()
    keep = np.argsort(np.bincount(features[features != 0].numpy()))[::-1][:count]
    return torch.from_numpy(np.isin(features.numpy(), keep))


def keep_largest(img, t):
    """post/array.py KeepLargestConnectedComponent."""
    img = img.clone()
    onehot = img.shape[0] > 1 if t.get("is_onehot") is None else t.get("is_onehot")
    labels = t.get("applied_labels")
    labels = [labels] if isinstance(labels, int) else labels
    if labels is None:
        labels = [i for i in range(1, img.shape[0]) if img[i].sum() > 0] if onehot else \
            [int(v) for v in torch.unique(img).tolist() if v != 0]
    hops, count = t.get("connectivity"), t.get("num_components", 1)
    if t.get("independent", True):
        for i in labels:
            fg = img[i] > 0 if onehot else img[0] == i
            drop = fg & ~largest_component_mask(fg, hops, count)
            img[i if onehot else 0][drop] = 0
        return img
    fg = (img[labels] == 1).any(0) if onehot else (img[0][..., None] == torch.tensor(labels, dtype=img.dtype)).any(-1)
    drop = fg & ~largest_component_mask(fg, hops, count)
    for i in labels if onehot else [0]:
        img[i][drop] = 0
    return img


def discretise(pred, t):
    """post/array.py AsDiscrete: argmax, then to_onehot, then threshold, then rounding."""
    if t.get("argmax"):
        pred = torch.argmax(pred, dim=0, keepdim=True).float()
    if t.get("to_onehot") is not None:
        pred = F.one_hot(pred[0].long(), t["to_onehot"]).permute(3, 0, 1, 2).float()
    if t.get("threshold") is not None:
        pred = (pred >= t["threshold"]).float()
    if t.get("rounding") is not None:
        pred = torch.round(pred)
    return pred


def postprocess(pred, config, pre_affine, applied):
    for t in transforms_of(config.item("postprocessing")):
        name = name_of(t)
        if name == "Activationsd":
            pred = torch.softmax(pred, 0) if t.get("softmax") else torch.sigmoid(pred) if t.get("sigmoid") else pred
        elif name == "AsDiscreted":
            pred = discretise(pred, t)
        elif name == "Invertd":
            pred = invert(pred, pre_affine, applied, t.get("nearest_interp", True))
        elif name == "KeepLargestConnectedComponentd":
            pred = keep_largest(pred, t)
        elif name == "Lambdad":
            pred = t["func"](pred)
        elif name == "CastToTyped":
            pred = pred.to(t.get("dtype", torch.float32))
        elif name == "SqueezeDimd":
            pred = pred.squeeze(t.get("dim", 0))
        elif name not in ("SaveImaged", "EnsureTyped", "ToTensord"):
            raise SystemExit(f"the reference does not run {name}")
    return pred


def infer(pre, net, inferer, roi):
    name = name_of(inferer)
    if name == "SimpleInferer":
        return net(pre[None]), 1
    if name == "SliceInferer":
        return slice_inferer(pre[None], net, inferer, roi)
    return sliding_window(pre[None], net, inferer, roi)


def main():
    bundle, image_path, out = sys.argv[1:4]
    options = dict(zip(sys.argv[4::2], sys.argv[5::2]))
    roi = [int(v) for v in options["--roi-size"].split(",")] if "--roi-size" in options else None
    names = options["--config"].split(",") if "--config" in options else \
        [next(f"configs/inference.{e}" for e in ("json", "yaml", "yml") if os.path.exists(f"{bundle}/configs/inference.{e}"))]
    config = Resolver(macros(merge_files([os.path.join(bundle, n) for n in names]), bundle))
    metadata = json.load(open(f"{bundle}/configs/metadata.json"))
    key = next(iter(metadata["network_data_format"]["inputs"]))
    torch.set_grad_enabled(False)
    img, affine = read_nifti(image_path)
    affine = affine.copy()
    original_size = list(img.shape[1:])
    pre, pre_affine, applied = preprocess(img, affine, {"preprocessing": config.item("preprocessing")}, key)
    net = torch.jit.load(f"{bundle}/models/model.ts").eval()
    pred, windows = infer(pre, net, config.item("inferer"), roi)
    pred = postprocess(pred[0].float(), config, pre_affine, applied)
    mask = pred if pred.dim() == 3 else pred[0] if pred.shape[0] == 1 else torch.argmax(pred, 0)
    assert list(mask.shape) == original_size, (mask.shape, original_size)
    mask = mask.float().round().to(torch.uint8).numpy()
    open(out + ".raw", "wb").write(np.ascontiguousarray(mask.transpose(2, 1, 0)).tobytes())
    json.dump({"network_grid": list(pre.shape[1:]), "windows": windows, "size": original_size,
               "labels": sorted(int(v) for v in np.unique(mask))}, open(out + ".json", "w"))


if __name__ == "__main__":
    main()
