#!/usr/bin/env python3
"""Why whole-volume inference leaves part of a core idle: LibTorch's CPU conv_transpose3d (the U-Net's
2x up-sampling) against the same operation written as one matrix product and a strided copy.

Times each at the sizes of a base-16 U-Net's up-sampling layers over a 240x240x160 volume, with 2
threads, and prints wall time, the cores used (process CPU time / wall time) and their largest
difference (float rounding). Same LibTorch version as MedSeg's (Debian's python3-torch).

  /usr/bin/python3 resources/benchmarks/conv_transpose_cpu.py
"""
import time

import torch


def timed(function, name):
    function()  # warm-up
    start, cpu = time.perf_counter(), time.process_time()
    result = function()
    wall = time.perf_counter() - start
    print(f"  {name}: {wall:.2f} s, {(time.process_time() - cpu) / wall:.2f} cores")
    return result


def as_matrix_product(x, weight, bias):
    """conv_transpose3d with kernel == stride, no padding: out[n, o, d*k+i, ...] = sum_c x[n, c, d, ...] w[c, o, i, ...]."""
    n, _, d, h, w = x.shape
    out_channels, (kd, kh, kw) = weight.shape[1], weight.shape[2:]
    y = torch.matmul(weight.flatten(1).t(), x.flatten(2)).view(n, out_channels, kd, kh, kw, d, h, w)
    y = y.permute(0, 1, 5, 2, 6, 3, 7, 4).reshape(n, out_channels, d * kd, h * kh, w * kw)
    return y + bias.view(1, -1, 1, 1, 1)


def main():
    torch.set_num_threads(2)
    torch.manual_seed(0)
    with torch.no_grad():
        for cin, cout, d, h, w in [(32, 16, 80, 120, 120), (64, 32, 40, 60, 60), (128, 64, 20, 30, 30)]:
            print(f"{cin} -> {cout} channels, {d}x{h}x{w} -> {2 * d}x{2 * h}x{2 * w}")
            x = torch.randn(1, cin, d, h, w)
            layer = torch.nn.ConvTranspose3d(cin, cout, 2, stride=2)
            a = timed(lambda: layer(x), "conv_transpose3d")
            b = timed(lambda: as_matrix_product(x, layer.weight, layer.bias), "matrix product")
            print(f"  largest difference {(a - b).abs().max().item():.1e}")


if __name__ == "__main__":
    main()
