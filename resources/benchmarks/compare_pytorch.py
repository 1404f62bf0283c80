#!/usr/bin/env python3
"""Side-by-side benchmark: MedSeg (C++/LibTorch) against the same 3-D U-Net in Python PyTorch, like for like.

Both sides run in this one invocation, on the same machine, alternating rounds (at least 3) so that
machine noise hits both alike, with what an expert user of each would give it:
  - the same threads: every core this process may use, unless --threads says;
  - float32 on both sides;
  - the same allocator settings: PyTorch runs once per allocator: glibc's defaults, MedSeg's heap
    settings (the one GLIBC_TUNABLES variable a PyTorch user would set for them), and jemalloc (as
    PyTorch's CPU tuning guides recommend; Debian's libjemalloc2, LD_PRELOAD). MedSeg keeps its own.
  - training: warm steps on one fixed batch on both sides (MedSeg `bench --fixed-batch`: no loader on
    either side);
  - inference: PyTorch's frozen graph optimised for inference (torch.jit.trace on a window,
    torch.jit.freeze, optimize_for_inference), warmed with one window; MedSeg's frozen optimised graph, timed on its
    second (warm) pass. The same Gaussian sliding window (96^3, overlap 0.5) on both sides.

Reported for inference: (a) the same work on both sides, the whole 240x240x155x4 grid; (b) a brain
case as each side's pipeline treats it: MedSeg crops to the brain's box before the windows (as
`medseg infer` and nnU-Net do), PyTorch runs its windows over the whole image (as a MONAI
SlidingWindowInferer does), and PyTorch again on MedSeg's crop (the same algorithm on both sides).
Ratios are PyTorch time / MedSeg time (above 1: MedSeg faster); the headline is against the fastest
PyTorch allocator.

  /usr/bin/python3 resources/benchmarks/compare_pytorch.py --medseg build/release/bin/medseg --save

--save writes the report with every round to resources/benchmarks/results/<date>-<cpu-model>-compare.json.
"""
import argparse
import datetime
import json
import math
import os
import statistics
import subprocess
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from benchmark_report import MEDSEG_HEAP_TUNABLES, cpu_model, save_report, usable_cores
JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
ALLOCATORS = ("glibc", "medseg-heap", "jemalloc")


# --- the same network as plugins/unet3d/nn/UNet3d.cpp -------------------------------------------------------
def group_count(channels):
    for groups in range(min(8, channels), 1, -1):
        if channels % groups == 0:
            return groups
    return 1


def make_norm(kind, channels):
    if kind == "batch":
        return nn.BatchNorm3d(channels)
    if kind == "group":
        return nn.GroupNorm(group_count(channels), channels)
    return nn.InstanceNorm3d(channels, affine=True)


class ConvNorm(nn.Module):
    def __init__(self, conv, norm, out_channels):
        super().__init__()
        self.conv = conv
        self.norm = make_norm(norm, out_channels)

    def forward(self, x):
        return self.norm(self.conv(x))


class ConvBlock(nn.Module):
    def __init__(self, cin, cout, cfg):
        super().__init__()
        self.slope = cfg["leaky_slope"]
        self.first = ConvNorm(nn.Conv3d(cin, cout, 3, padding=1, bias=False), cfg["norm"], cout)
        self.second = ConvNorm(nn.Conv3d(cout, cout, 3, padding=1, bias=False), cfg["norm"], cout)
        self.residual = cfg["residual"]
        self.projection = nn.Conv3d(cin, cout, 1, bias=False) if self.residual and cin != cout else None

    def forward(self, x):
        y = F.leaky_relu(self.first(x), self.slope, inplace=True)
        y = self.second(y)
        if self.residual:
            y = y + (self.projection(x) if self.projection is not None else x)
        return F.leaky_relu(y, self.slope, inplace=True)


class Downsample(nn.Module):
    def __init__(self, cin, cout, cfg):
        super().__init__()
        self.slope = cfg["leaky_slope"]
        self.body = ConvNorm(nn.Conv3d(cin, cout, 2, stride=2, bias=False), cfg["norm"], cout)

    def forward(self, x):
        return F.leaky_relu(self.body(x), self.slope, inplace=True)


class UNet3d(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        f = lambda level: min(cfg["max_filters"], cfg["base_filters"] << level)
        depth = cfg["depth"]
        self.encoder = nn.ModuleList()
        self.downsample = nn.ModuleList()
        for level in range(depth):
            if level == 0:
                self.encoder.append(ConvBlock(cfg["in_channels"], f(0), cfg))
            else:
                self.downsample.append(Downsample(f(level - 1), f(level), cfg))
                self.encoder.append(ConvBlock(f(level), f(level), cfg))
        self.upsample = nn.ModuleList()
        self.decoder = nn.ModuleList()
        for level in range(depth - 1):
            self.upsample.append(nn.ConvTranspose3d(f(level + 1), f(level), 2, stride=2))
            self.decoder.append(ConvBlock(2 * f(level), f(level), cfg))
        self.head = nn.Conv3d(f(0), cfg["out_channels"], 1)

    def forward(self, x):
        skips = []
        for level, block in enumerate(self.encoder):
            if level > 0:
                x = self.downsample[level - 1](x)
            x = block(x)
            skips.append(x)
        for level in range(len(self.decoder) - 1, -1, -1):
            x = self.upsample[level](x)
            x = self.decoder[level](torch.cat([x, skips[level]], 1))
        return self.head(x)


# --- nnU-Net style sliding window with Gaussian weights, as core/infer/SlidingWindow ---------------
def gaussian_map(roi, sigma_scale=0.125):
    axes = []
    for n in roi:
        sigma = n * sigma_scale
        centre = (n - 1) / 2.0
        coords = torch.arange(n, dtype=torch.float32)
        axes.append(torch.exp(-((coords - centre) ** 2) / (2 * sigma * sigma)))
    g = axes[0][:, None, None] * axes[1][None, :, None] * axes[2][None, None, :]
    g = g / g.max()
    return torch.clamp(g, min=1e-3)


def window_starts(size, roi, overlap):
    if size <= roi:
        return [0]
    step = max(1, int(roi * (1 - overlap)))
    count = math.ceil((size - roi) / step) + 1
    if count == 1:
        return [0]
    actual = (size - roi) / (count - 1)
    return [int(round(i * actual)) for i in range(count)]


@torch.no_grad()
def sliding_window(model, image, roi, overlap, out_channels):
    c, d, h, w = image.shape
    pad = [max(0, r - s) for r, s in zip(roi, (d, h, w))]
    image = F.pad(image, (0, pad[2], 0, pad[1], 0, pad[0]))
    _, D, H, W = image.shape
    weight = gaussian_map(roi)
    out = torch.zeros(out_channels, D, H, W)
    norm = torch.zeros(1, D, H, W)
    windows = 0
    for z in window_starts(D, roi[0], overlap):
        for y in window_starts(H, roi[1], overlap):
            for x in window_starts(W, roi[2], overlap):
                patch = image[None, :, z:z + roi[0], y:y + roi[1], x:x + roi[2]]
                logits = model(patch)[0]
                out[:, z:z + roi[0], y:y + roi[1], x:x + roi[2]] += logits * weight
                norm[:, z:z + roi[0], y:y + roi[1], x:x + roi[2]] += weight
                windows += 1
    return (out / norm)[:, :d, :h, :w], windows


def soft_dice_ce(logits, target):
    ce = F.cross_entropy(logits, target)
    probabilities = torch.softmax(logits, 1)
    one_hot = F.one_hot(target, logits.shape[1]).permute(0, 4, 1, 2, 3).float()
    dims = (0, 2, 3, 4)
    intersection = (probabilities * one_hot).sum(dims)
    denominator = probabilities.sum(dims) + one_hot.sum(dims)
    dice = (2 * intersection + 1e-5) / (denominator + 1e-5)
    return ce + (1 - dice[1:].mean())


def torch_config_line(text, key):
    """A KEY=value of torch.__config__.show() / at::show_config() (BLAS_INFO=generic, ...)."""
    import re
    match = re.search(re.escape(key) + r"=([^,\s]+)", text or "")
    return match.group(1) if match else None


def allocator_environment(name):
    env = {k: v for k, v in os.environ.items() if k not in ("GLIBC_TUNABLES", "LD_PRELOAD") and not k.startswith("MALLOC_")}
    if name == "medseg-heap":
        env["GLIBC_TUNABLES"] = MEDSEG_HEAP_TUNABLES
    elif name == "jemalloc":
        env["LD_PRELOAD"] = JEMALLOC
    return env


# --- one PyTorch round, run in a child process so that its allocator is set before it starts ----------
def peer_round(spec):
    cfg = spec["config"]
    torch.set_num_threads(spec["threads"])
    torch.manual_seed(0)
    model = UNet3d(cfg)
    optimiser = torch.optim.Adam(model.parameters(), lr=1e-3)
    p = spec["patch"]
    x = torch.randn(spec["batch"], cfg["in_channels"], p, p, p)
    y = torch.randint(0, cfg["out_channels"], (spec["batch"], p, p, p))
    model.train()
    times = []
    for step in range(spec["warmup"] + spec["steps"]):
        start = time.perf_counter()
        optimiser.zero_grad(set_to_none=True)
        loss = soft_dice_ce(model(x), y)
        loss.backward()
        optimiser.step()
        if step >= spec["warmup"]:
            times.append(time.perf_counter() - start)
    result = {"train_step_s": statistics.median(times), "threads": torch.get_num_threads(),
              "allocator": spec["allocator"], "torch_version": torch.__version__,
              "blas": torch_config_line(torch.__config__.show(), "BLAS_INFO"),
              "glibc_tunables": os.environ.get("GLIBC_TUNABLES"), "ld_preload": os.environ.get("LD_PRELOAD")}
    if spec["skip_infer"]:
        return result
    model.eval()
    roi = [spec["roi"]] * 3
    with torch.no_grad():
        # Traced on a window (every window has that shape; scripting cannot index the ModuleLists).
        window = torch.randn(1, cfg["in_channels"], *roi)
        graph = torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.trace(model, window)))
        graph(window)  # warm-up: one window
        for name, size_xyz in spec["volumes"].items():
            volume = torch.randn(cfg["in_channels"], size_xyz[2], size_xyz[1], size_xyz[0])
            start = time.perf_counter()
            _, windows = sliding_window(graph, volume, roi, spec["overlap"], cfg["out_channels"])
            result[name + "_s"] = time.perf_counter() - start
            result[name + "_windows"] = windows
    return result


def run_peer(spec, allocator):
    spec = dict(spec, allocator=allocator)
    output = subprocess.run([sys.executable, os.path.abspath(__file__), "--peer-round", json.dumps(spec)], check=True,
                            capture_output=True, text=True, env=allocator_environment(allocator)).stdout
    return json.loads(output.strip().splitlines()[-1])


def medseg_bench(args, extra):
    command = [args.medseg, "--json", "bench", "--base-filters", str(args.base_filters), "--depth", str(args.depth),
               "--norm", args.norm, "--batch", str(args.batch), "--patch", str(args.patch), "--steps", str(args.steps),
               "--warmup", str(args.warmup), "--roi", str(args.roi), "--overlap", str(args.overlap),
               "--infer-size", args.infer_size, "--threads", str(args.threads), "--precision", "fp32"] + extra
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    for line in output.splitlines():
        event = json.loads(line)
        if event.get("event") == "result":
            return event
    raise RuntimeError("medseg bench printed no result:\n" + output)


def medseg_round(args):
    """Training on a fixed batch and the same-work sliding window (noise over the whole grid); then the
    brain case as `medseg infer` treats it (cropped to the brain's box)."""
    same = medseg_bench(args, ["--fixed-batch", "--volume", "noise"] + (["--skip-infer"] if args.skip_infer else []))
    result = {"train_step_s": same["train"]["step_s"], "threads": same["threads"], "allocator": same.get("allocator"),
              "libtorch_version": same.get("libtorch_version"),
              "blas": torch_config_line(same.get("libtorch_config", ""), "BLAS_INFO")}
    if not args.skip_infer:
        result["whole_grid_s"] = same["infer"]["sliding_window_s"]
        result["whole_grid_windows"] = same["infer"]["windows"]
        brain = medseg_bench(args, ["--skip-train", "--volume", "brain"])
        result["brain_s"] = brain["infer"]["sliding_window_s"]
        result["brain_windows"] = brain["infer"]["windows"]
        result["brain_crop_xyz"] = brain["infer"]["volume"]["network_input"]
        result["brain_share_of_grid"] = brain["infer"]["volume"]["share_of_grid"]
    return result


def figures(values):
    return {"best": min(values), "median": statistics.median(values), "rounds": values}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--medseg", default="build/release/bin/medseg")
    parser.add_argument("--base-filters", type=int, default=16)
    parser.add_argument("--depth", type=int, default=4)
    parser.add_argument("--norm", default="instance")
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--patch", type=int, default=64)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--threads", type=int, default=0, help="threads for both (default: every core this process may use)")
    parser.add_argument("--allocators", default=",".join(ALLOCATORS), help="PyTorch allocators to run: " + ", ".join(ALLOCATORS))
    parser.add_argument("--roi", type=int, default=96)
    parser.add_argument("--overlap", type=float, default=0.5)
    parser.add_argument("--infer-size", default="240,240,155")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--skip-infer", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--save", action="store_true", help="write the report to resources/benchmarks/results/")
    parser.add_argument("--smoke", action="store_true",
                        help="tiny sizes (base 4, depth 2, 16^3 patches, 48x48x32 volume, glibc only) to check that "
                             "both sides run; its figures measure nothing")
    parser.add_argument("--peer-round", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.smoke:
        if args.save:
            parser.error("--smoke figures measure nothing: they are not saved")
        args.base_filters, args.depth, args.batch, args.patch, args.steps, args.warmup = 4, 2, 1, 16, 2, 1
        args.roi, args.infer_size, args.allocators = 32, "48,48,32", "glibc"
    if args.peer_round:
        print(json.dumps(peer_round(json.loads(args.peer_round))))
        return 0
    if args.rounds < 3:
        parser.error("--rounds must be at least 3 (best-of and median need them)")
    args.threads = args.threads or usable_cores()
    allocators = [a for a in args.allocators.split(",") if a]
    for a in allocators:
        if a not in ALLOCATORS:
            parser.error(f"--allocators: unknown '{a}' (choose from {', '.join(ALLOCATORS)})")
    if "jemalloc" in allocators and not os.path.exists(JEMALLOC):
        parser.error(JEMALLOC + " is missing: install Debian's libjemalloc2 (packaging/setup.sh does) or leave jemalloc out")
    cfg = {"in_channels": 4, "out_channels": 4, "depth": args.depth, "base_filters": args.base_filters,
           "max_filters": 320, "norm": args.norm, "leaky_slope": 0.01, "residual": False}
    grid = [int(v) for v in args.infer_size.split(",")]

    medseg, pytorch = [], {a: [] for a in allocators}
    for _ in range(args.rounds):  # alternate, so drifting machine load affects both
        m = medseg_round(args)
        medseg.append(m)
        spec = {"config": cfg, "threads": args.threads, "patch": args.patch, "batch": args.batch, "steps": args.steps,
                "warmup": args.warmup, "roi": args.roi, "overlap": args.overlap, "skip_infer": args.skip_infer,
                "volumes": {} if args.skip_infer else {"whole_grid": grid, "brain_crop": m["brain_crop_xyz"]}}
        for a in allocators:
            pytorch[a].append(run_peer(spec, a))

    metrics = ["train_step_s"] + ([] if args.skip_infer else ["whole_grid_s", "brain_s"])
    report = {"date": datetime.date.today().isoformat(), "cpu": cpu_model(), "config": cfg, "batch": args.batch,
              "patch": args.patch, "threads": args.threads, "precision": "float32 on both sides", "rounds": args.rounds,
              "medseg": {"libtorch_version": medseg[-1]["libtorch_version"], "blas": medseg[-1]["blas"],
                         "allocator": medseg[-1]["allocator"], "threads": medseg[-1]["threads"],
                         "training": "bench --fixed-batch: warm steps on one batch, no loader",
                         "inference": "frozen optimised graph, second (warm) pass, concurrent windows"},
              "pytorch": {"torch_version": torch.__version__, "blas": torch_config_line(torch.__config__.show(), "BLAS_INFO"),
                          "threads": pytorch[allocators[0]][-1]["threads"],
                          "training": "warm steps on one fixed tensor",
                          "inference": "torch.jit.freeze + optimize_for_inference, warmed with one window"},
              "medseg_s": {}, "pytorch_s": {}, "ratio_median": {}, "headline": {}}
    for metric in metrics:
        report["medseg_s"][metric] = figures([r[metric] for r in medseg])
        if metric == "brain_s":
            continue  # its peers are below
        report["pytorch_s"][metric] = {a: figures([r[metric] for r in rounds]) for a, rounds in pytorch.items()}
        report["ratio_median"][metric] = {a: report["pytorch_s"][metric][a]["median"] / report["medseg_s"][metric]["median"]
                                          for a in allocators}
    if not args.skip_infer:
        # PyTorch on MedSeg's crop: the same algorithm on both sides for the brain case.
        report["pytorch_s"]["brain_crop_s"] = {a: figures([r["brain_crop_s"] for r in rounds]) for a, rounds in pytorch.items()}
        report["ratio_median"]["brain_s_vs_pytorch_on_the_crop"] = {
            a: report["pytorch_s"]["brain_crop_s"][a]["median"] / report["medseg_s"]["brain_s"]["median"] for a in allocators}
        # The algorithm's gain: PyTorch's windows over the whole image (its default) against MedSeg's on the crop.
        report["ratio_median"]["brain_s_vs_pytorch_on_the_whole_grid"] = {
            a: report["pytorch_s"]["whole_grid_s"][a]["median"] / report["medseg_s"]["brain_s"]["median"] for a in allocators}
        report["brain_crop_xyz"] = medseg[-1]["brain_crop_xyz"]
        report["brain_share_of_grid"] = medseg[-1]["brain_share_of_grid"]
        report["windows"] = {"whole_grid": medseg[-1]["whole_grid_windows"], "brain": medseg[-1]["brain_windows"]}
    for name, ratios in report["ratio_median"].items():
        fastest = min(ratios, key=ratios.get)  # the PyTorch allocator closest to MedSeg: the fair headline
        report["headline"][name] = {"ratio": ratios[fastest], "pytorch_allocator": fastest}

    if args.save:
        save_report(report, "compare", {"medseg_rounds": medseg, "pytorch_rounds": pytorch})
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"3-D U-Net base {args.base_filters} depth {args.depth} {args.norm} norm, float32, {args.threads} threads on both "
          f"sides, median of {args.rounds} alternating rounds; ratio = PyTorch time / MedSeg time (above 1: MedSeg faster)")
    print(f"  MedSeg: LibTorch {report['medseg']['libtorch_version']}, BLAS {report['medseg']['blas']}, {report['medseg']['allocator']}")
    print(f"  PyTorch: torch {torch.__version__}, BLAS {report['pytorch']['blas']}, allocators {', '.join(allocators)}")
    labels = {"train_step_s": "training step (fixed batch)", "whole_grid_s": "sliding window, whole grid (same work)",
              "brain_s": "sliding window, brain case: MedSeg on its crop vs PyTorch on the same crop"}
    for metric in metrics:
        m = report["medseg_s"][metric]["median"]
        ratio_key = "brain_s_vs_pytorch_on_the_crop" if metric == "brain_s" else metric
        peer_key = "brain_crop_s" if metric == "brain_s" else metric
        peers = "  ".join(f"{a} {report['pytorch_s'][peer_key][a]['median']:.3f} s (x{report['ratio_median'][ratio_key][a]:.2f})"
                          for a in allocators)
        print(f"  {labels[metric]}\n    MedSeg {m:.3f} s   PyTorch {peers}")
    if not args.skip_infer:
        gain = report["headline"]["brain_s_vs_pytorch_on_the_whole_grid"]
        print(f"  brain case, MedSeg's crop ({'x'.join(map(str, report['brain_crop_xyz']))}, "
              f"{100 * report['brain_share_of_grid']:.0f}% of the grid) against PyTorch's windows over the whole grid: "
              f"x{gain['ratio']:.2f} (PyTorch with {gain['pytorch_allocator']})")
    print("  headline (against the fastest PyTorch allocator): " +
          ", ".join(f"{k} x{v['ratio']:.2f}" for k, v in report["headline"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
