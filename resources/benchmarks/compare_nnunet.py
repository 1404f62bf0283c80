#!/usr/bin/env python3
"""Side-by-side benchmark: `medseg infer` (the nnunet plugin) against nnU-Net v2's own predictor on the same
nnU-Net model folder, the same case, the same CPU and threads, float32, alternating rounds.

What is timed, on both sides, is what a user waits for: one process from start to the written mask
(reading the model, preprocessing, sliding window, export), the case as nnU-Net's raw files
(CASE_0000.nii.gz ...).
  - nnU-Net as its users run it: `nnUNetv2_predict -device cpu` (its predict_entry_point: all cores,
    3 preprocessing and 3 export processes, mirroring on, tile_step_size 0.5), through nnUNetPredictor;
  - nnU-Net given what an expert would give it: the same, with MedSeg's heap settings (the one
    GLIBC_TUNABLES variable that sets them for any program) and 1 preprocessing / export process (one
    case: the pools only cost start-up);
  - MedSeg: `medseg infer --model MODEL --input CASE_FOLDER --out OUT --threads T`.
Each with and without mirroring (`--set mirror=false`, nnU-Net's --disable_tta). Ratios are nnU-Net time /
MedSeg time (above 1: MedSeg faster); the headline is against nnU-Net given MedSeg's heap settings.
Beside them, MedSeg's one-pass whole-volume inference and bf16 (where the CPU computes bf16), with
their Dice against MedSeg's default mask, per side the seconds spent in oneDNN's convolutions
(ONEDNN_VERBOSE=1, one more run each), and, with nnU-Net's side, how far MedSeg's probabilities and labels
are from nnU-Net's on the benchmark case (one more run each with probabilities written, and one of MedSeg
with oneDNN held at AVX2: its direct convolutions instead of the Winograd kernel).

nnU-Net is not installable here from PyPI; run it from its sources (docs/nnunet.md, "Comparing with
nnU-Net" says how): --nnunet-src DIR holds nnunetv2, dynamic_network_architectures, acvl_utils,
batchgenerators, batchgeneratorsv2, einops and fft_conv_pytorch (git archives of the tags nnU-Net v2.5.2
uses); Debian's python3-scipy, python3-skimage, python3-nibabel, python3-pandas, python3-sklearn and python3-seaborn are needed. Without
it, only MedSeg's side runs (--smoke does that on the test fixtures).

The model: --model FOLDER, or --default-size (the default) builds an nnU-Net model folder with nnU-Net's
own default 3d_fullres network for the fixtures' data set (PlainConvUNet, features 32..256, patch
48x48x40, as nnU-Net's planner planned it) and seeded random weights, saved as nnUNetTrainer saves
checkpoints (needs --nnunet-src for the network). The case: a synthetic BraTS-like case of
--case-size voxels at 1 mm (`medseg dataset synth`).

  /usr/bin/python3 resources/benchmarks/compare_nnunet.py --medseg build/release/bin/medseg --nnunet-src /tmp/nnsrc --save

--save writes resources/benchmarks/results/<date>-<cpu-model>-compare-nnunet.json with every round.
"""
import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from benchmark_report import MEDSEG_HEAP_TUNABLES, cpu_model, save_report, usable_cores

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.abspath(os.path.join(HERE, "..", ".."))
FIXTURES = os.path.join(SOURCE, "tests", "data", "nnunet")
FIXTURE_MODEL = os.path.join(FIXTURES, "models", "Dataset912_SynthBraTSLabels", "nnUNetTrainer__nnUNetPlansSmall__3d_fullres")
# Import-only stand-ins for what nnU-Net imports but Debian 12 lacks (torch._dynamo, SimpleITK, ...), the
# fixtures' own (tests/data/nnunet/README.md).
SHIMS = os.path.join(FIXTURES, "scripts", "shims")


def nnunet_environment(src, heap):
    env = {k: v for k, v in os.environ.items() if k not in ("GLIBC_TUNABLES", "LD_PRELOAD")}
    env["PYTHONPATH"] = SHIMS + os.pathsep + src
    scratch = tempfile.gettempdir()
    for key in ("nnUNet_raw", "nnUNet_preprocessed", "nnUNet_results"):
        env.setdefault(key, scratch)  # nnU-Net warns without them; prediction reads none of them
    env["nnUNet_compile"] = "f"
    if heap:
        env["GLIBC_TUNABLES"] = MEDSEG_HEAP_TUNABLES
    return env


# --- nnU-Net's side, in a child process so its environment is set before it starts --------------------
def peer_round(spec):
    import multiprocessing
    import torch
    from nnunetv2.inference.predict_from_raw_data import nnUNetPredictor
    # predict_entry_point with -device cpu: every core.
    torch.set_num_threads(spec["threads"] or multiprocessing.cpu_count())
    predictor = nnUNetPredictor(tile_step_size=0.5, use_gaussian=True, use_mirroring=spec["mirror"],
                                perform_everything_on_device=True, device=torch.device("cpu"), verbose=False,
                                verbose_preprocessing=False, allow_tqdm=False)
    predictor.initialize_from_trained_model_folder(spec["model"], None, checkpoint_name="checkpoint_final.pth")
    predictor.predict_from_files(spec["input"], spec["output"], save_probabilities=spec.get("probabilities", False),
                                 overwrite=True,
                                 num_processes_preprocessing=spec["processes"],
                                 num_processes_segmentation_export=spec["processes"],
                                 folder_with_segs_from_prev_stage=None, num_parts=1, part_id=0)


def nnunet_command(args, model, case_folder, out, mirror, expert, probabilities=False):
    spec = {"model": model, "input": case_folder, "output": out, "mirror": mirror, "threads": args.threads,
            "processes": 1 if expert else 3, "probabilities": probabilities}
    return [sys.executable, os.path.abspath(__file__), "--peer-round", json.dumps(spec)], nnunet_environment(args.nnunet_src, expert)


def medseg_command(args, model, case_folder, out, extra):
    command = [args.medseg, "--json", "infer", "--model", model, "--input", case_folder, "--out", out,
               "--threads", str(args.threads)] + extra
    return command, dict(os.environ)


def run_timed(command, env):
    """Seconds from start to exit, and what the program printed."""
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        raise RuntimeError(f"{command[0]} failed:\n" + result.stdout[-3000:] + result.stderr[-3000:])
    return seconds, result.stdout + result.stderr


def run_nnunet(args, model, case_folder, out, mirror, expert):
    return run_timed(*nnunet_command(args, model, case_folder, out, mirror, expert))[0]


def run_medseg(args, model, case_folder, out, extra):
    return run_timed(*medseg_command(args, model, case_folder, out, extra))[0]


def convolution_time(command, env):
    """One more run with oneDNN's execution log on (ONEDNN_VERBOSE=1: a line with the milliseconds of every
    primitive run): the seconds spent in oneDNN's convolutions against the whole run's. Both programs call
    the same libdnnl; convolutions PyTorch runs outside oneDNN (its own kernels for some small batch-1
    shapes) are not in the sum."""
    seconds, output = run_timed(command, dict(env, ONEDNN_VERBOSE="1"))
    milliseconds = 0.0
    for line in output.splitlines():
        if line.startswith("onednn_verbose,exec,cpu,convolution,"):
            milliseconds += float(line.rsplit(",", 1)[1])
    # No log at all: oneDNN never ran (every convolution was one of PyTorch's own).
    return {"seconds": seconds, "convolution_seconds": milliseconds / 1000.0, "onednn_ran": "onednn_verbose,info" in output}


def agreement(args, model, case_folder, folder, mirror):
    """Both sides once more, probabilities written: the largest difference between nnU-Net's probabilities
    and MedSeg's, and the voxels whose labels differ, in all and where nnU-Net's two largest class
    probabilities differ by more than 1e-3 (#40's acceptance bound, as the fixture tests check it); the same
    for MedSeg's direct convolutions."""
    import nibabel
    import numpy
    extra = ["--probabilities"] + ([] if mirror else ["--set", "mirror=false"])
    theirs_folder = os.path.join(folder, "nnunet")
    run_timed(*nnunet_command(args, model, case_folder, theirs_folder, mirror, expert=False, probabilities=True))
    # nnU-Net's npz holds (C, z, y, x) for NIfTI inputs; MedSeg writes (x, y, z, C).
    theirs = numpy.load(os.path.join(theirs_folder, "case.npz"))["probabilities"].astype(numpy.float32).transpose(3, 2, 1, 0)
    labels_theirs = numpy.asarray(nibabel.load(os.path.join(theirs_folder, "case.nii.gz")).dataobj)
    top_two = numpy.sort(theirs, axis=-1)[..., -2:]
    decisive = (top_two[..., 1] - top_two[..., 0]) > 1e-3

    def against_theirs(mine_folder):
        mine = numpy.asarray(nibabel.load(os.path.join(mine_folder, "case_probabilities.nii.gz")).dataobj,
                             dtype=numpy.float32)
        differing = numpy.asarray(nibabel.load(os.path.join(mine_folder, "case.nii.gz")).dataobj) != labels_theirs
        difference = numpy.abs(mine - theirs)
        return {"max_probability_difference": float(difference.max()),
                "values_over_1e-3": int((difference > 1e-3).sum()), "values": int(difference.size),
                "voxels": int(differing.size), "labels_differing": int(differing.sum()),
                "labels_differing_where_decisive": int((differing & decisive).sum())}

    command, env = medseg_command(args, model, case_folder, os.path.join(folder, "medseg"), extra)
    run_timed(command, env)
    result = against_theirs(os.path.join(folder, "medseg"))
    # The same with oneDNN held at AVX2, where it has no Winograd kernel: MedSeg's direct convolutions,
    # to tell the Winograd kernel's rounding from the float16 sums both sides make of the tiles' logits.
    command, env = medseg_command(args, model, case_folder, os.path.join(folder, "medseg-direct"), extra)
    run_timed(command, dict(env, ONEDNN_MAX_CPU_ISA="AVX2"))
    result["direct_convolutions"] = against_theirs(os.path.join(folder, "medseg-direct"))
    return result


# --- inputs ------------------------------------------------------------------------------------------
def make_case(args, folder):
    """A synthetic case at 1 mm in nnU-Net's raw layout (CASE_0000.nii.gz ..)."""
    import nibabel
    import numpy
    synth = os.path.join(folder, "synth")
    subprocess.run([args.medseg, "dataset", "synth", "--out", synth, "--cases", "1", "--seed", "7", "--size",
                    args.case_size], check=True, capture_output=True)
    image = nibabel.load(os.path.join(synth, "imagesTr", "BRATS_001.nii.gz"))
    data = numpy.asarray(image.dataobj, dtype=numpy.float32)
    raw = os.path.join(folder, "case")
    os.makedirs(raw)
    affine = numpy.diag([1.0, 1.0, 1.0, 1.0])  # the voxels as they are, on nnU-Net's 1 mm plans grid
    for c in range(data.shape[3]):
        nibabel.save(nibabel.Nifti1Image(data[..., c], affine), os.path.join(raw, f"case_{c:04d}.nii.gz"))
    return raw


def make_default_size_model(args, folder):
    """nnU-Net's default 3d_fullres network for the fixtures' data set, seeded random weights, saved as
    nnUNetTrainer.save_checkpoint saves it."""
    script = """
import collections, json, os, sys, torch
from nnunetv2.utilities.get_network_from_plans import get_network_from_plans
model, fixture = sys.argv[1], sys.argv[2]
plans = json.load(open(os.path.join(fixture, 'plans.json')))
dataset = json.load(open(os.path.join(fixture, 'dataset.json')))
c = plans['configurations']['3d_fullres']
c['patch_size'] = [48, 48, 40]                       # as nnU-Net's planner planned it
c['architecture']['arch_kwargs']['features_per_stage'] = [32, 64, 128, 256]
plans['plans_name'] = 'nnUNetPlans'
torch.manual_seed(0)
a = c['architecture']
net = get_network_from_plans(a['network_class_name'], a['arch_kwargs'], a['_kw_requires_import'],
                             len(dataset['channel_names']), len(dataset['labels']), deep_supervision=True)
os.makedirs(os.path.join(model, 'fold_0'), exist_ok=True)
json.dump(plans, open(os.path.join(model, 'plans.json'), 'w'), indent=1)
json.dump(dataset, open(os.path.join(model, 'dataset.json'), 'w'), indent=1)
torch.save({'network_weights': net.state_dict(), 'optimizer_state': None, 'grad_scaler_state': None,
            'logging': {}, '_best_ema': None, 'current_epoch': 0,
            'init_args': {'plans': plans, 'configuration': '3d_fullres', 'fold': 0, 'dataset_json': dataset,
                          'unpack_dataset': True, 'device': torch.device('cpu')},
            'trainer_name': 'nnUNetTrainer', 'inference_allowed_mirroring_axes': (0, 1, 2)},
           os.path.join(model, 'fold_0', 'checkpoint_final.pth'))
"""
    model = os.path.join(folder, "Dataset912_SynthBraTSLabels", "nnUNetTrainer__nnUNetPlans__3d_fullres")
    subprocess.run([sys.executable, "-c", script, model, FIXTURE_MODEL], check=True,
                   env=nnunet_environment(args.nnunet_src, False))
    return model


def dice_per_label(reference, other):
    import nibabel
    import numpy
    a = numpy.asarray(nibabel.load(reference).dataobj)
    b = numpy.asarray(nibabel.load(other).dataobj)
    scores = {}
    for label in sorted(set(numpy.unique(a)) | set(numpy.unique(b))):
        if label == 0:
            continue
        x, y = a == label, b == label
        scores[int(label)] = float(2 * (x & y).sum() / max(1, x.sum() + y.sum()))
    return scores


def figures(values):
    return {"median": statistics.median(values), "best": min(values), "rounds": values}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--medseg", default="build/release/bin/medseg")
    parser.add_argument("--nnunet-src", help="folder with nnU-Net's and its dependencies' sources (see above)")
    parser.add_argument("--model", help="an nnU-Net model folder (default: nnU-Net's default-size network, --default-size)")
    parser.add_argument("--case-size", default="128,128,96", help="synthetic case grid x,y,z at 1 mm")
    parser.add_argument("--threads", type=int, default=0, help="threads for both (default: every core this process may use)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--save", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--smoke", action="store_true",
                        help="the fixture model and a 48^3 case, one round, MedSeg's side (and nnU-Net's with --nnunet-src): "
                             "checks that everything runs; its figures measure nothing")
    parser.add_argument("--peer-round", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.peer_round:
        peer_round(json.loads(args.peer_round))
        return 0
    if args.smoke:
        if args.save:
            parser.error("--smoke figures measure nothing: they are not saved")
        args.model, args.case_size, args.rounds = args.model or FIXTURE_MODEL, "48,48,48", 1
    elif args.rounds < 3:
        parser.error("--rounds must be at least 3 (the median needs them)")
    if args.nnunet_src and not os.path.isdir(os.path.join(args.nnunet_src, "nnunetv2")):
        parser.error(f"--nnunet-src {args.nnunet_src} has no nnunetv2 folder")
    if not args.model and not args.nnunet_src:
        parser.error("nnU-Net's default-size model is built with nnU-Net's code: give --nnunet-src, or --model FOLDER")
    args.threads = args.threads or usable_cores()
    args.medseg = os.path.abspath(args.medseg)

    work = tempfile.mkdtemp(prefix="compare-nnunet-")
    try:
        model = os.path.abspath(args.model) if args.model else make_default_size_model(args, work)
        case = make_case(args, work)
        sides = {"medseg": lambda out, mirror: run_medseg(args, model, case, out, [] if mirror else ["--set", "mirror=false"])}
        if args.nnunet_src:
            sides["nnunet_default"] = lambda out, mirror: run_nnunet(args, model, case, out, mirror, expert=False)
            sides["nnunet_medseg_heap"] = lambda out, mirror: run_nnunet(args, model, case, out, mirror, expert=True)
        times = {m: {s: [] for s in sides} for m in ("mirror", "no_mirror")}
        for r in range(args.rounds):  # alternate, so drifting machine load affects every side alike
            for mode in times:
                for side, run in sides.items():
                    out = os.path.join(work, f"{side}-{mode}-{r}")
                    times[mode][side].append(run(out, mode == "mirror"))
        report = {"date": datetime.date.today().isoformat(), "cpu": cpu_model(), "threads": args.threads,
                  "model": model if args.model else "nnU-Net default 3d_fullres PlainConvUNet (features 32..256, patch "
                                                     "48x48x40), seeded random weights",
                  "case": f"synthetic, {args.case_size} voxels at 1 mm, 4 channels", "rounds": args.rounds,
                  "precision": "float32 on both sides", "seconds": {}, "ratio_median": {}}
        for mode, per_side in times.items():
            report["seconds"][mode] = {side: figures(values) for side, values in per_side.items()}
            for side in per_side:
                if side != "medseg":
                    report["ratio_median"][f"{mode}/{side}"] = (report["seconds"][mode][side]["median"] /
                                                               report["seconds"][mode]["medseg"]["median"])
        if "nnunet_medseg_heap" in sides:
            report["headline"] = {m: report["ratio_median"][f"{m}/nnunet_medseg_heap"] for m in times}
        # Where the time goes: oneDNN's convolutions (the same library on both sides) against the whole run.
        report["convolution_time"] = {}
        for mode in times:
            mirror = mode == "mirror"
            runs = {"medseg": medseg_command(args, model, case, os.path.join(work, f"profile-medseg-{mode}"),
                                             [] if mirror else ["--set", "mirror=false"])}
            if args.nnunet_src:
                runs["nnunet_default"] = nnunet_command(args, model, case, os.path.join(work, f"profile-nnunet-{mode}"),
                                                        mirror, expert=False)
            report["convolution_time"][mode] = {side: convolution_time(*run) for side, run in runs.items()}
        if args.nnunet_src:
            report["agreement_with_nnunet"] = {mode: agreement(args, model, case, os.path.join(work, f"agreement-{mode}"),
                                                               mode == "mirror") for mode in times}
        # MedSeg's other roads on the same case: one pass over the whole volume, bf16; Dice against the default.
        reference = os.path.join(work, "medseg-mirror-0", "case.nii.gz")
        variants = {"whole_volume": ["--set", "whole_volume=true"], "bf16": ["--set", "precision=bf16"]}
        report["variants"] = {}
        for name, extra in variants.items():
            out = os.path.join(work, f"variant-{name}")
            try:
                seconds = run_medseg(args, model, case, out, extra)
            except RuntimeError as e:
                report["variants"][name] = {"refused": str(e).strip().splitlines()[-1][:300]}
                continue
            report["variants"][name] = {"seconds": seconds, "dice_vs_default": dice_per_label(reference, os.path.join(out, "case.nii.gz"))}
    finally:
        shutil.rmtree(work, ignore_errors=True)

    if args.save:
        save_report(report, "compare-nnunet")
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"nnU-Net model on a {report['case']}, {args.threads} threads, float32, median of {args.rounds} alternating rounds "
          f"(ratio = nnU-Net time / MedSeg time)")
    for mode, per_side in report["seconds"].items():
        line = "  ".join(f"{side} {v['median']:.2f} s" for side, v in per_side.items())
        ratios = "  ".join(f"x{r:.2f} vs {k.split('/')[1]}" for k, r in report["ratio_median"].items() if k.startswith(mode + "/"))
        print(f"  {mode}: {line}   {ratios}")
    for mode, per_side in report["convolution_time"].items():
        print(f"  {mode}, oneDNN convolutions (one more run each, ONEDNN_VERBOSE=1): " +
              "  ".join(f"{side} {v['convolution_seconds']:.2f} of {v['seconds']:.2f} s" +
                        ("" if v["onednn_ran"] else " (oneDNN did not run)") for side, v in per_side.items()))
    for mode, v in report.get("agreement_with_nnunet", {}).items():
        for name, w in (("", v), (" (direct convolutions, oneDNN at AVX2)", v["direct_convolutions"])):
            print(f"  {mode}, against nnU-Net's probabilities{name}: max difference {w['max_probability_difference']:.2e} "
                  f"({w['values_over_1e-3']} of {w['values']} values over 1e-3), labels differing in "
                  f"{w['labels_differing']} of {w['voxels']} voxels, {w['labels_differing_where_decisive']} where "
                  f"nnU-Net's top two differ by more than 1e-3")
    for name, v in report["variants"].items():
        print(f"  MedSeg {name}: " + (v["refused"] if "refused" in v else
                                      f"{v['seconds']:.2f} s, Dice vs default {v['dice_vs_default']}"))
    if "headline" not in report:
        print("  nnU-Net's side not run: give --nnunet-src (see --help)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
