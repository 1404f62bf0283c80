#!/usr/bin/env python3
"""Side-by-side benchmark: MedSeg (C++/LibTorch) against the same 3-D U-Net in Python PyTorch.

Both run in this one invocation, on the same machine, with the same architecture, batch, patch and
sliding-window settings, in float32, alternating rounds (at least 3) so that machine noise hits both
alike. PyTorch runs as its users run it: default thread count, no extra tricks; MedSeg with its own
defaults (every core the process may use). --threads N gives both N threads. Prints the ratios (PyTorch time / MedSeg time: above 1 means MedSeg is faster) for a training
step and for sliding-window inference of a full BraTS-sized volume, and the fraction of MedSeg's
training step time spent waiting for data.

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


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown-cpu"


def pytorch_round(args, cfg):
    torch.manual_seed(0)
    model = UNet3d(cfg)
    optimiser = torch.optim.Adam(model.parameters(), lr=1e-3)
    p = args.patch
    x = torch.randn(args.batch, cfg["in_channels"], p, p, p)
    y = torch.randint(0, cfg["out_channels"], (args.batch, p, p, p))
    model.train()
    times = []
    for step in range(args.warmup + args.steps):
        start = time.perf_counter()
        optimiser.zero_grad(set_to_none=True)
        loss = soft_dice_ce(model(x), y)
        loss.backward()
        optimiser.step()
        if step >= args.warmup:
            times.append(time.perf_counter() - start)
    result = {"train_step_s": statistics.median(times)}
    if not args.skip_infer:
        model.eval()
        size = [int(v) for v in args.infer_size.split(",")]  # x, y, z like medseg
        volume = torch.randn(cfg["in_channels"], size[2], size[1], size[0])
        start = time.perf_counter()
        _, windows = sliding_window(model, volume, [args.roi] * 3, args.overlap, cfg["out_channels"])
        result["sliding_window_s"] = time.perf_counter() - start
        result["windows"] = windows
    return result


def medseg_round(args):
    command = [args.medseg, "--json", "bench", "--base-filters", str(args.base_filters), "--depth", str(args.depth),
               "--norm", args.norm, "--batch", str(args.batch), "--patch", str(args.patch), "--steps", str(args.steps),
               "--warmup", str(args.warmup), "--roi", str(args.roi),
               "--overlap", str(args.overlap), "--infer-size", args.infer_size]
    if args.threads:
        command += ["--threads", str(args.threads)]
    if args.skip_infer:
        command.append("--skip-infer")
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    for line in output.splitlines():
        event = json.loads(line)
        if event.get("event") == "result":
            return event
    raise RuntimeError("medseg bench printed no result:\n" + output)


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
    parser.add_argument("--threads", type=int, default=0, help="threads for both (default: each its own default)")
    parser.add_argument("--roi", type=int, default=96)
    parser.add_argument("--overlap", type=float, default=0.5)
    parser.add_argument("--infer-size", default="240,240,155")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--skip-infer", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--save", action="store_true", help="write the report to resources/benchmarks/results/")
    args = parser.parse_args()
    if args.rounds < 3:
        parser.error("--rounds must be at least 3 (best-of and median need them)")
    if args.threads:
        torch.set_num_threads(args.threads)
    cfg = {"in_channels": 4, "out_channels": 4, "depth": args.depth, "base_filters": args.base_filters,
           "max_filters": 320, "norm": args.norm, "leaky_slope": 0.01, "residual": False}

    medseg, pytorch = [], []
    for _ in range(args.rounds):  # alternate, so drifting machine load affects both
        medseg.append(medseg_round(args))
        pytorch.append(pytorch_round(args, cfg))

    def figures(values):
        return {"best": min(values), "median": statistics.median(values), "rounds": values}

    m_train = figures([r["train"]["step_s"] for r in medseg])
    p_train = figures([r["train_step_s"] for r in pytorch])
    report = {"date": datetime.date.today().isoformat(), "cpu": cpu_model(), "config": cfg, "batch": args.batch,
              "patch": args.patch, "pytorch_threads": torch.get_num_threads(), "medseg_threads": medseg[-1]["threads"],
              "precision": "float32", "rounds": args.rounds,
              "medseg_train_step_s": m_train, "pytorch_train_step_s": p_train,
              "train_speed_ratio_median": p_train["median"] / m_train["median"],
              "train_speed_ratio_best": p_train["best"] / m_train["best"],
              "medseg_train_cpu_utilisation": [r["train"].get("cpu_utilisation") for r in medseg],
              "medseg_data_wait_fraction": medseg[-1]["train"].get("data_wait_fraction")}
    if not args.skip_infer:
        m_inf = figures([r["infer"]["sliding_window_s"] for r in medseg])
        p_inf = figures([r["sliding_window_s"] for r in pytorch])
        report.update({"medseg_sliding_window_s": m_inf, "pytorch_sliding_window_s": p_inf,
                       "infer_speed_ratio_median": p_inf["median"] / m_inf["median"],
                       "infer_speed_ratio_best": p_inf["best"] / m_inf["best"],
                       "medseg_infer_cpu_utilisation": [r["infer"].get("sliding_window_cpu_utilisation") for r in medseg],
                       "windows": pytorch[-1]["windows"]})
    if args.save:
        folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
        os.makedirs(folder, exist_ok=True)
        name = report["date"] + "-" + "-".join("".join(c if c.isalnum() else " " for c in report["cpu"]).split()) + "-compare.json"
        path = os.path.join(folder, name)
        with open(path + ".tmp", "w") as f:
            json.dump(report, f, indent=1, sort_keys=True)
        os.replace(path + ".tmp", path)
        print("written: " + path, file=sys.stderr)
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"3-D U-Net base {args.base_filters} depth {args.depth} {args.norm} norm, batch {args.batch}, "
          f"patch {args.patch}^3, float32, MedSeg {report['medseg_threads']} threads, PyTorch "
          f"{report['pytorch_threads']} threads, median (best) of {args.rounds} alternating rounds")
    print(f"  training step   MedSeg {m_train['median']:8.3f} s ({m_train['best']:.3f})   PyTorch "
          f"{p_train['median']:8.3f} s ({p_train['best']:.3f})   ratio {report['train_speed_ratio_median']:5.2f}x "
          f"({report['train_speed_ratio_best']:.2f}x)")
    if not args.skip_infer:
        print(f"  sliding window  MedSeg {m_inf['median']:8.3f} s ({m_inf['best']:.3f})   PyTorch "
              f"{p_inf['median']:8.3f} s ({p_inf['best']:.3f})   ratio {report['infer_speed_ratio_median']:5.2f}x "
              f"({report['infer_speed_ratio_best']:.2f}x; {report['windows']} windows of {args.roi}^3 over {args.infer_size})")
    wait = report["medseg_data_wait_fraction"]
    if wait is not None:
        print(f"  MedSeg data-wait fraction of the training step: {wait:.3f}")
    print("  ratio = PyTorch time / MedSeg time (above 1: MedSeg faster)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
