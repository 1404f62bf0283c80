#!/usr/bin/env python3
"""Check: `medseg infer` against MONAI's own run of the same MONAI bundles on the same images, voxel by voxel.

The bundles are the test bundles tests/plugins/torchscript/zoo_bundles.py writes: one per model-zoo 3-D
segmentation bundle MedSeg's tests name (brats_mri_segmentation, prostate_mri_anatomy,
pediatric_abdominal_ct_segmentation, ventricular_short_axis_3label, wholeBody_ct_segmentation,
wholeBrainSeg_Large_UNEST_segmentation, spleen_ct_segmentation), each with that bundle's inference config
(its transforms, inferer and arguments, in the config syntax it uses) and metadata, around a tiny network
scripted to TorchScript (models/model.ts) with the bundle's channel counts. The images are synthetic
phantoms written here with nibabel, as tests/plugins/torchscript/MonaiZooTest.cpp paints them: BraTS-like
(4 channels), prostate-, abdomen- (air -1000 HU), CT- (air 0) and heart-like, each on an anisotropic LPS
grid (46x52x24 voxels, 1.2 x 0.9 x 2.1 mm) and on an oblique one (40x34x46, 1.1 x 1.4 x 0.8 mm, rotated
20 degrees about z and 12 about x), float32 NIfTI.

MONAI's side is MONAI itself, from its source (not installed: --monai-src DIR holds the `monai` package;
get it with `git --git-dir=/work/.mirror/Project-MONAI+MONAI/repo archive HEAD monai | tar -x -C DIR`, or
from a MONAI release archive), run as `monai.bundle run` runs a bundle's inference, minus the ignite
engine (pytorch-ignite is not needed): monai.bundle.ConfigParser reads the bundle's config files (merged in
order, as `--config_file a,b` merges them) and its metadata, with bundle_root set to the bundle folder and
output_dir to a scratch folder; then `preprocessing` on {"image": IMAGE} (the BraTS bundle gets its four
channels as four files, as its datalist gives them), the batch collated, `inferer` with the bundle's
models/model.ts (torch.jit.load; the configs' network_def classes are not built), float32 on the CPU under
torch.no_grad(), the batch and the output decollated and merged as SupervisedEvaluator merges them, then
`postprocessing` (Invertd, AsDiscreted, its Lambdad, ... and SaveImaged, whose file is MONAI's mask). Each
bundle runs in a child process of its own. Where MONAI warns (an optional package it lacks, e.g. itk for
the pediatric bundle's ITKReader, which MONAI then replaces by its default NIfTI reader), the report says so.

MedSeg's side: `medseg --json infer --model BUNDLE --input IMAGE --out MASK --precision fp32
[--bundle-config a,b]`. Both masks are read with nibabel: the agreement is the fraction of voxels with the
same label (a shape mismatch is a failure), with the two label sets and both masks' affines against the
input's. The acceptance: >= 99.9 % of voxels agree for every bundle and image.

Cases: every bundle on an anisotropic and an oblique image; prostate_mri_anatomy with an override file
{"postprocessing#transforms#2#nearest_interp": true} merged after its inference.json (the zoo's config
inverts argmax labels with bilinear interpolation, which MedSeg refuses, naming that override), and
wholeBody_ct_segmentation once more with {"displayable_configs#highres": false} (its 3 mm grid), and
spleen_ct_segmentation twice more with a Gaussian window of 24x24x16 voxels (overlapping windows), Invertd once with
nearest_interp false (the zoo's) and once true: Spacingd, Orientationd, Invertd with both settings and a
Gaussian sliding window, on both images.

  /usr/bin/python3 resources/benchmarks/compare_monai.py --medseg build/release/bin/medseg --monai-src /tmp/monaisrc --save

--smoke: spleen_ct_segmentation on the anisotropic CT image only; without MONAI's source it runs MedSeg's
side alone and says so (exit 0). --save writes resources/benchmarks/results/<date>-<cpu-model>-compare-monai.json.
Exit 1 when a case agrees on fewer than 99.9 % of voxels, the shapes differ or `medseg infer` fails; a
case MONAI itself cannot run is reported (with why) and does not fail the check.
"""
import argparse
import datetime
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from benchmark_report import cpu_model, save_report

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.abspath(os.path.join(HERE, "..", ".."))
ZOO_BUNDLES = os.path.join(SOURCE, "tests", "plugins", "torchscript", "zoo_bundles.py")
MIRROR = "/work/.mirror/Project-MONAI+MONAI/repo"
THRESHOLD = 0.999
HOW_TO_GET_MONAI = ("get it with: mkdir -p DIR && git --git-dir=" + MIRROR + " archive HEAD monai | tar -x -C DIR "
                    "(or the `monai` folder of a MONAI release archive), then --monai-src DIR")

# Extra config files a case merges after the bundle's inference config: name -> (file, content).
OVERRIDES = {
    "nearest": ("configs/nearest.json", json.dumps({"postprocessing#transforms#2#nearest_interp": True})),
    "lowres": ("configs/lowres.json", json.dumps({"displayable_configs#highres": False})),
    # The MONAI-bundles issue's own acceptance bundle: Spacingd, Orientationd, a Gaussian sliding window and
    # Invertd with each nearest_interp setting (spleen's Invertd is its second post-processing transform).
    # Windows smaller than the images, so that they overlap and the weights decide the tile borders.
    "gaussian": ("configs/gaussian.json", json.dumps({"inferer#mode": "gaussian", "inferer#roi_size": [24, 24, 16]})),
    "gaussian-nearest": ("configs/gaussian-nearest.json", json.dumps(
        {"inferer#mode": "gaussian", "inferer#roi_size": [24, 24, 16],
         "postprocessing#transforms#1#nearest_interp": True})),
}
# (bundle, image, override or None)
CASES = [
    ("brats_mri_segmentation", "brats-anisotropic", None),
    ("brats_mri_segmentation", "brats-oblique", None),
    ("prostate_mri_anatomy", "prostate-anisotropic", "nearest"),
    ("prostate_mri_anatomy", "prostate-oblique", "nearest"),
    ("pediatric_abdominal_ct_segmentation", "abdomen-anisotropic", None),
    ("pediatric_abdominal_ct_segmentation", "abdomen-oblique", None),
    ("ventricular_short_axis_3label", "heart-anisotropic", None),
    ("ventricular_short_axis_3label", "heart-oblique", None),
    ("wholeBody_ct_segmentation", "ct-anisotropic", None),
    ("wholeBody_ct_segmentation", "ct-oblique", None),
    ("wholeBody_ct_segmentation", "ct-oblique", "lowres"),
    ("wholeBrainSeg_Large_UNEST_segmentation", "ct-anisotropic", None),
    ("wholeBrainSeg_Large_UNEST_segmentation", "ct-oblique", None),
    ("spleen_ct_segmentation", "ct-anisotropic", None),
    ("spleen_ct_segmentation", "ct-oblique", None),
    ("spleen_ct_segmentation", "ct-anisotropic", "gaussian"),
    ("spleen_ct_segmentation", "ct-oblique", "gaussian"),
    ("spleen_ct_segmentation", "ct-anisotropic", "gaussian-nearest"),
    ("spleen_ct_segmentation", "ct-oblique", "gaussian-nearest"),
]
SMOKE_CASES = [("spleen_ct_segmentation", "ct-anisotropic", None)]


# --- images: MonaiZooTest.cpp's phantoms ----------------------------------------------------------------
def rotated_direction(degrees_z, degrees_x):
    """BundleFixture.h rotatedDirection: rotated about z, then about x (LPS)."""
    import numpy
    z, x = numpy.radians(degrees_z), numpy.radians(degrees_x)
    rz = numpy.array([[numpy.cos(z), -numpy.sin(z), 0], [numpy.sin(z), numpy.cos(z), 0], [0, 0, 1]])
    rx = numpy.array([[1, 0, 0], [0, numpy.cos(x), -numpy.sin(x)], [0, numpy.sin(x), numpy.cos(x)]])
    return rx @ rz


def grids():
    """name -> (size, spacing, origin, direction), LPS as MedSeg's Geometry holds them."""
    import numpy
    return {"anisotropic": ((46, 52, 24), (1.2, 0.9, 2.1), (40.0, 30.0, -20.0), numpy.eye(3)),
            "oblique": ((40, 34, 46), (1.1, 1.4, 0.8), (-12.5, 20.25, 7.0), rotated_direction(20.0, 12.0))}


def phantom(grid, base, blobs, outside=0.0, border=2):
    """MonaiZooTest.cpp phantom: `base` per channel, ellipsoids (offset and radii in world mm about the grid's
    centre, a value per channel, None: unchanged) painted in order with a soft edge, a border of `outside`.
    Returns the voxels [X, Y, Z, C] and the NIfTI (RAS) affine."""
    import numpy
    size, spacing, origin, direction = grid
    lps = numpy.eye(4)
    lps[:3, :3] = direction * numpy.array(spacing)
    lps[:3, 3] = origin
    index = numpy.stack(numpy.meshgrid(*[numpy.arange(n, dtype=numpy.float64) for n in size], indexing="ij"), -1)
    world = index @ lps[:3, :3].T + lps[:3, 3]
    centre = lps[:3, :3] @ ((numpy.array(size) - 1) / 2.0) + lps[:3, 3]
    values = numpy.empty(tuple(size) + (len(base),))
    values[...] = base
    for offset, radii, paint in blobs:
        rho = (((world - centre - numpy.array(offset)) / numpy.array(radii)) ** 2).sum(-1)
        inside = 1.0 / (1.0 + numpy.exp(-(1.0 - numpy.sqrt(rho)) / 0.12))
        for c, v in enumerate(paint):
            if v is not None:
                values[..., c] += (v - values[..., c]) * inside
    keep = numpy.zeros(size, dtype=bool)
    keep[border:size[0] - border, border:size[1] - border, border:size[2] - border] = True
    values[~keep] = outside
    return values.astype(numpy.float32), numpy.diag([-1.0, -1.0, 1.0, 1.0]) @ lps


def image_kinds():
    """MonaiZooTest.cpp's images: name -> (base, blobs, outside)."""
    return {
        # T1c, T1, T2, FLAIR: oedema bright in T2 and FLAIR, a core bright in T1c, an enhancing part bright in T1.
        "brats": ([100, 100, 100, 100], [((3, 0, 0), (12, 10, 9), (None, None, 220, 250)),
                                         ((4, 1, 0), (7, 6, 5), (250, None, None, None)),
                                         ((6, 2, 1), (3, 3, 3), (None, 300, None, None))], 0.0),
        # central gland inside the peripheral zone, and a bright blob apart that KeepLargestConnectedComponentd drops
        "prostate": ([50], [((0, 0, 0), (14, 11, 10), (150,)), ((1, 0, 0), (8, 6, 6), (200,)),
                            ((-12, -9, 8), (4, 4, 4), (200,))], 0.0),
        # CT: soft tissue 40 HU, liver 120, spleen 200, pancreas 300, in air (-1000 HU: CropForegroundd's minimum)
        "abdomen": ([40], [((-6, 0, 0), (10, 8, 8), (120,)), ((8, 3, 0), (7, 5, 5), (200,)),
                           ((4, -7, 2), (6, 5, 5), (300,))], -1000.0),
        "ct": ([40], [((-6, 0, 0), (10, 8, 8), (120,)), ((8, 3, 0), (7, 5, 5), (200,)),
                      ((4, -7, 2), (6, 5, 5), (300,))], 0.0),
        # short axis: myocardium 60, left ventricle 100 inside it, right ventricle 80 beside, through every slice
        "heart": ([20], [((0, 0, 0), (14, 12, 30), (60,)), ((0, 0, 0), (9, 8, 30), (100,)),
                         ((10, 6, 0), (5, 4, 30), (80,))], 0.0),
    }


def write_image(folder, name):
    """FOLDER/NAME.nii.gz (channels as the 4th axis), and for several channels each channel as
    NAME_000c.nii.gz too (what MONAI's BraTS datalist gives LoadImaged). Returns (MedSeg's input, MONAI's)."""
    import nibabel
    kind, grid = name.split("-")
    base, blobs, outside = image_kinds()[kind]
    values, affine = phantom(grids()[grid], base, blobs, outside)

    def save(data, path):
        image = nibabel.Nifti1Image(data, affine)
        image.set_qform(affine, code=1)
        image.set_sform(affine, code=1)
        nibabel.save(image, path)
        return path

    whole = save(values[..., 0] if values.shape[-1] == 1 else values, os.path.join(folder, name + ".nii.gz"))
    if values.shape[-1] == 1:
        return whole, whole
    return whole, [save(values[..., c], os.path.join(folder, f"{name}_{c:04d}.nii.gz")) for c in range(values.shape[-1])]


# --- MONAI's side, in a child process per bundle ---------------------------------------------------------
def monai_round(spec):
    """Runs in the child: spec {monai_src, bundle, configs, threads, runs: [{name, input, out_dir}]}; prints
    one JSON line {name: {mask, seconds, network_grid, warnings} or {error, warnings}}."""
    import logging
    import warnings
    sys.path.insert(0, spec["monai_src"])
    import torch
    import monai
    from monai.bundle import ConfigParser
    from monai.data import decollate_batch, list_data_collate
    torch.set_num_threads(spec["threads"])
    torch.set_grad_enabled(False)
    sys.path.insert(1, spec["bundle"])  # as ConfigWorkflow does, for the bundle's own `scripts`
    logged = []

    class Keep(logging.Handler):
        def emit(self, record):
            if record.levelno >= logging.WARNING:
                logged.append(record.getMessage())
    logging.getLogger().addHandler(Keep())
    results = {}
    network = torch.jit.load(os.path.join(spec["bundle"], "models", "model.ts"), map_location="cpu").eval()
    for run in spec["runs"]:
        logged.clear()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                start = time.perf_counter()
                parser = ConfigParser()
                parser.read_config([os.path.join(spec["bundle"], c) for c in spec["configs"]])
                parser.read_meta(os.path.join(spec["bundle"], "configs", "metadata.json"))
                parser.update({"bundle_root": spec["bundle"], "output_dir": run["out_dir"]})
                preprocessing = parser.get_parsed_content("preprocessing")
                inferer = parser.get_parsed_content("inferer")
                postprocessing = parser.get_parsed_content("postprocessing")
                image_key = "image"  # the key the zoo configs' dataset gives: [{'image': i} for i in @datalist]
                data = preprocessing({image_key: run["input"]})
                grid = [int(v) for v in data[image_key].shape[1:]]
                batch = list_data_collate([data])
                # SupervisedEvaluator: pred = inferer(inputs, network), then batch and output decollated and
                # merged (engine_apply_transform) before the postprocessing.
                pred = inferer(batch[image_key].float(), network)
                items = decollate_batch(batch, detach=True)
                outputs = decollate_batch({image_key: batch[image_key], "pred": pred}, detach=True)
                merged = dict(items[0])
                merged.update(outputs[0])
                postprocessing(merged)
                written = sorted(glob.glob(os.path.join(run["out_dir"], "**", "*.nii*"), recursive=True))
                if len(written) != 1:
                    raise RuntimeError(f"SaveImaged wrote {len(written)} files: {written}")
                results[run["name"]] = {"mask": written[0], "seconds": time.perf_counter() - start,
                                        "network_grid": grid}
            except Exception as e:  # what MONAI raised, for the report
                results[run["name"]] = {"error": f"{type(e).__name__}: {e}"[:2000]}
        messages = []
        for m in [str(w.message) for w in caught] + logged:
            m = " ".join(m.split())[:400]
            if m not in messages:
                messages.append(m)
        results[run["name"]]["warnings"] = messages
    print(json.dumps({"monai_version": monai.__version__, "results": results}))


def run_monai(args, bundle, configs, runs):
    spec = {"monai_src": args.monai_src, "bundle": bundle, "configs": configs, "threads": args.threads, "runs": runs}
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")  # float32 on the CPU, as MedSeg's side runs
    done = subprocess.run([sys.executable, os.path.abspath(__file__), "--monai-round", json.dumps(spec)],
                          capture_output=True, text=True, env=env)
    lines = [l for l in done.stdout.splitlines() if l.startswith("{")]
    if done.returncode != 0 or not lines:
        why = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return None, {r["name"]: {"error": f"MONAI's child process failed (exit {done.returncode}): {why}",
                                  "warnings": []} for r in runs}
    answer = json.loads(lines[-1])
    return answer["monai_version"], answer["results"]


# --- MedSeg's side ---------------------------------------------------------------------------------------
def run_medseg(args, bundle, configs, image, out):
    command = [args.medseg, "--json", "infer", "--model", bundle, "--input", image, "--out", out, "--precision", "fp32",
               "--threads", str(args.threads)]
    if configs != ["configs/inference.json"]:
        command += ["--bundle-config", ",".join(configs)]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    grid, messages = None, []
    for line in done.stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("event") == "result" and event.get("cases"):
            grid = event["cases"][0].get("network_grid")
        elif event.get("message") and (event.get("event") in ("error", "warning") or event.get("level") in ("error", "warning")):
            messages.append(event["message"])
    if done.returncode != 0 or not os.path.exists(out):
        why = "; ".join(messages) or (done.stdout + done.stderr).strip()[-1500:]
        return {"error": f"medseg infer exited {done.returncode}: {why}", "command": " ".join(command)}
    return {"seconds": seconds, "network_grid": grid, "command": " ".join(command)}


# --- comparison ------------------------------------------------------------------------------------------
def compare(medseg_mask, monai_mask, input_image):
    import nibabel
    import numpy
    a_image, b_image = nibabel.load(medseg_mask), nibabel.load(monai_mask)
    a, b = numpy.asarray(a_image.dataobj), numpy.asarray(b_image.dataobj)
    reference = nibabel.load(input_image)
    out = {"shape_medseg": list(a.shape), "shape_monai": list(b.shape), "shape_input": list(reference.shape[:3]),
           "affine_medseg_vs_input": float(numpy.abs(a_image.affine - reference.affine).max()),
           "affine_monai_vs_input": float(numpy.abs(b_image.affine - reference.affine).max())}
    b = b.squeeze() if b.ndim > 3 else b
    a = a.squeeze() if a.ndim > 3 else a
    fractional = float(numpy.abs(b - numpy.rint(b)).max()) if b.size else 0.0
    if fractional > 1e-3:
        out["monai_fractional_labels"] = fractional
    if a.shape != b.shape:
        out["shape_mismatch"] = True
        return out
    a, b = numpy.rint(a).astype(numpy.int64), numpy.rint(b).astype(numpy.int64)
    same = int((a == b).sum())
    out.update({"voxels": int(a.size), "differing_voxels": int(a.size - same), "agreement": same / a.size,
                "labels_medseg": sorted(int(v) for v in numpy.unique(a)),
                "labels_monai": sorted(int(v) for v in numpy.unique(b))})
    out["labels_equal"] = out["labels_medseg"] == out["labels_monai"]
    return out


def find_monai(path):
    return bool(path) and os.path.isfile(os.path.join(path, "monai", "__init__.py"))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--medseg", default="build/release/bin/medseg")
    parser.add_argument("--monai-src", default=os.environ.get("MONAI_SRC", "/tmp/monaisrc"),
                        help="folder holding MONAI's `monai` package source (default $MONAI_SRC or /tmp/monaisrc)")
    parser.add_argument("--threads", type=int, default=0, help="threads for both sides (default: every core this process may use)")
    parser.add_argument("--work", help="keep the bundles, images and masks in this folder (default: a scratch folder, removed)")
    parser.add_argument("--bundle", action="append", help="only this bundle (repeatable)")
    parser.add_argument("--save", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--smoke", action="store_true",
                        help="spleen_ct_segmentation on the anisotropic CT image; without MONAI's source, MedSeg's side only")
    parser.add_argument("--monai-round", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.monai_round:
        monai_round(json.loads(args.monai_round))
        return 0
    if args.smoke and args.save:
        parser.error("--smoke checks that everything runs: its figures are not saved")
    have_monai = find_monai(args.monai_src)
    if not have_monai and not args.smoke:
        parser.error(f"MONAI source not found in {args.monai_src} (no monai/__init__.py): {HOW_TO_GET_MONAI}")
    if os.path.exists(args.medseg) or os.path.isabs(args.medseg):
        args.medseg = os.path.abspath(args.medseg)
    else:
        args.medseg = os.path.join(SOURCE, args.medseg)
    if not os.path.exists(args.medseg):
        parser.error(f"no medseg program at {args.medseg}: build it or give --medseg")
    args.threads = args.threads or len(os.sched_getaffinity(0))
    args.monai_src = os.path.abspath(args.monai_src)
    cases = SMOKE_CASES if args.smoke else CASES
    if args.bundle:
        cases = [c for c in cases if c[0] in args.bundle]
        if not cases:
            parser.error("no case runs the bundles named by --bundle")

    work = os.path.abspath(args.work) if args.work else tempfile.mkdtemp(prefix="compare-monai-")
    os.makedirs(work, exist_ok=True)
    report = {"date": datetime.date.today().isoformat(), "cpu": cpu_model(), "threads": args.threads,
              "threshold": THRESHOLD, "precision": "float32 on the CPU on both sides",
              "monai_src": args.monai_src if have_monai else None, "monai_version": None,
              "bundles": "tests/plugins/torchscript/zoo_bundles.py (zoo configs, tiny TorchScript networks)",
              "images": {}, "cases": []}
    try:
        zoo = os.path.join(work, "zoo")
        shutil.rmtree(zoo, ignore_errors=True)
        os.makedirs(zoo)
        subprocess.run([sys.executable, ZOO_BUNDLES, zoo], check=True, capture_output=True, text=True)
        for name, (path, content) in OVERRIDES.items():
            for bundle in {c[0] for c in cases if c[2] == name}:
                with open(os.path.join(zoo, bundle, path), "w") as f:
                    f.write(content)
        images = {}
        for image in sorted({c[1] for c in cases}):
            images[image] = write_image(work, image)
            size, spacing, _, direction = grids()[image.split("-")[1]]
            report["images"][image] = {"size": list(size), "spacing_mm": list(spacing),
                                       "oblique": bool(abs(direction - direction.round()).max() > 1e-9),
                                       "channels": 1 if isinstance(images[image][1], str) else len(images[image][1])}

        def configs_of(bundle, override):
            default = next(f"configs/inference.{e}" for e in ("json", "yaml", "yml")
                           if os.path.exists(os.path.join(zoo, bundle, f"configs/inference.{e}")))
            return [default] + ([OVERRIDES[override][0]] if override else [])

        # MONAI: one child process per bundle and config list, every image of it.
        monai_results = {}
        if have_monai:
            groups = {}
            for bundle, image, override in cases:
                groups.setdefault((bundle, override), []).append(image)
            for (bundle, override), names in groups.items():
                runs = [{"name": image, "input": images[image][1],
                         "out_dir": os.path.join(work, "monai", f"{bundle}-{override or 'default'}-{image}")}
                        for image in names]
                for r in runs:
                    shutil.rmtree(r["out_dir"], ignore_errors=True)
                    os.makedirs(r["out_dir"])
                version, results = run_monai(args, os.path.join(zoo, bundle), configs_of(bundle, override), runs)
                report["monai_version"] = report["monai_version"] or version
                for image, result in results.items():
                    monai_results[(bundle, image, override)] = result

        failed = []
        os.makedirs(os.path.join(work, "medseg"), exist_ok=True)
        for bundle, image, override in cases:
            configs = configs_of(bundle, override)
            case = {"bundle": bundle, "image": image, "configs": configs}
            out = os.path.join(work, "medseg", f"{bundle}-{override or 'default'}-{image}.nii.gz")
            medseg = run_medseg(args, os.path.join(zoo, bundle), configs, images[image][0], out)
            case["medseg"] = medseg
            if "error" in medseg:
                case["status"] = "medseg-failed"
                failed.append(case)
            elif not have_monai:
                case["status"] = "medseg-only"
                import nibabel
                import numpy
                case["labels_medseg"] = sorted(int(v) for v in numpy.unique(numpy.asarray(nibabel.load(out).dataobj)))
            else:
                monai = monai_results[(bundle, image, override)]
                case["monai"] = monai
                if "error" in monai:
                    case["status"] = "monai-failed"
                else:
                    case.update(compare(out, monai["mask"], images[image][0]))
                    if case.get("shape_mismatch"):
                        case["status"] = "shape-mismatch"
                        failed.append(case)
                    elif case["agreement"] < THRESHOLD:
                        case["status"] = "below-threshold"
                        failed.append(case)
                    else:
                        case["status"] = "ok"
                    case["network_grid_equal"] = medseg.get("network_grid") == monai.get("network_grid")
            report["cases"].append(case)
        report["all_pass"] = not failed
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)

    if args.save:
        save_report(report, "compare-monai")
    if args.json:
        print(json.dumps(report))
    else:
        print(f"medseg infer against MONAI {report['monai_version']}'s own run" if have_monai else
              "medseg infer on MONAI bundles (MONAI not run)", end="")
        print(f", float32 on the CPU, {args.threads} threads; acceptance: agreement >= {THRESHOLD:.3f}")
        for c in report["cases"]:
            where = f"  {c['bundle']}" + (f" [{','.join(c['configs'][1:])}]" if len(c["configs"]) > 1 else "") + f" on {c['image']}: "
            if c["status"] == "medseg-failed":
                print(where + "FAILED, " + c["medseg"]["error"][:600])
            elif c["status"] == "medseg-only":
                print(where + f"MedSeg wrote labels {c['labels_medseg']} in {c['medseg']['seconds']:.1f} s; agreement not "
                              f"measured (MONAI source not found: MedSeg's side only; {HOW_TO_GET_MONAI})")
            elif c["status"] == "monai-failed":
                print(where + "MONAI itself could not run it: " + c["monai"]["error"][:600])
            elif c["status"] == "shape-mismatch":
                print(where + f"FAILED, shape mismatch: MedSeg {c['shape_medseg']}, MONAI {c['shape_monai']}")
            else:
                print(where + f"agreement {c['agreement'] * 100:.3f} % ({c['differing_voxels']} of {c['voxels']} voxels "
                              f"differ), labels MedSeg {c['labels_medseg']} MONAI {c['labels_monai']}"
                              + ("" if c["labels_equal"] else " (label sets differ)")
                              + ("" if c["network_grid_equal"] else f", network grids MedSeg {c['medseg']['network_grid']} "
                                                                    f"MONAI {c['monai']['network_grid']}")
                              + ("" if c["status"] == "ok" else "  BELOW THRESHOLD"))
            for w in (c.get("monai") or {}).get("warnings", []):
                if "not installed" in w or "version doesn't match" in w:
                    print(f"      MONAI warned: {w}")
        if not have_monai:
            print(f"MONAI source not found: MedSeg's side only ({args.monai_src} has no monai/__init__.py)")
    if failed:
        print("FAILED: " + ", ".join(f"{c['bundle']} on {c['image']} ({c['status']})" for c in failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
