#!/usr/bin/env python3
"""Writes network_reference.json: what dynamic-network-architectures (DNA) v0.3.1 itself computes, for
tests/plugins/nnunet/NnunetNetworkTest.cpp to compare MedSeg's LibTorch port with.

Two kinds of cases:
  * checkpoint: the three fixture models (tests/data/nnunet = the nnU-Net v2.5.2 fixtures), built as
    nnU-Net builds them for inference (get_network_from_plans with deep_supervision=False, eval()),
    with the fold's `network_weights` loaded strictly;
  * synthetic: small architectures exercising what the fixtures do not (BottleneckD blocks, Conv2d,
    BatchNorm with running statistics, ReLU, nonlin_first, dropout, no conv bias, stem_channels,
    anisotropic kernels and strides, scalar arguments), with weights given by a formula
    (formula_weights below, repeated in the C++ test) so that no weights need storing.

For each case the file holds the logits at 64 fixed positions, per-channel sums of the logits and of
their absolute values, the number of state-dict keys and of distinct parameters. The network input is
    x[n, c, i0, i1(, i2)] = sin(0.31 i0 + 0.17 i1 + 0.23 i2 + 1.1 c + 0.5 n)
                          + 0.5 cos(0.05 i0 i1 - 0.07 i2 + c)          (i2 = 0 for 2-D; float64 -> float32)

How it was made (Debian 12's python3-torch 1.13, no nnU-Net install needed):
    git -C /work/.mirror/MIC-DKFZ+dynamic-network-architectures/repo archive v0.3.1 | tar -x -C /tmp/dna
    PYTHONPATH=/tmp/dna /usr/bin/python3 make_network_reference.py \
        --fixtures /work/shared/fixtures/nnunet --out network_reference.json [--dump-weights /tmp/net/weights]
--dump-weights also writes each checkpoint's network_weights as raw little-endian files plus index.json
(for checking the port without a checkpoint reader); those files are not part of the repository.
"""
import argparse
import json
import math
import os
import pydoc

import numpy as np
import torch

DNA = 'dynamic_network_architectures'
CHECKPOINT_CASES = [
    ('911_plain_f0', 'models/Dataset911_SynthBraTSRegions/nnUNetTrainer__nnUNetPlansSmall__3d_fullres', 0),
    ('911_resenc_f0', 'models/Dataset911_SynthBraTSRegions/nnUNetTrainer__nnUNetResEncSmall__3d_fullres', 0),
    ('912_plain_f0', 'models/Dataset912_SynthBraTSLabels/nnUNetTrainer__nnUNetPlansSmall__3d_fullres', 0),
]
REQUIRES_IMPORT = ['conv_op', 'norm_op', 'dropout_op', 'nonlin']

SYNTHETIC_CASES = [
    {
        'name': 'resenc_bottleneck_bn2d',
        'input_shape': [2, 3, 16, 12],  # batch 2: batch norm must use its running statistics
        'output_channels': 2,
        'architecture': {
            'network_class_name': f'{DNA}.architectures.unet.ResidualEncoderUNet',
            'arch_kwargs': {
                'n_stages': 3, 'features_per_stage': [4, 6, 8], 'conv_op': 'torch.nn.Conv2d',
                'kernel_sizes': 3, 'strides': [1, 2, [2, 1]], 'n_blocks_per_stage': 2,
                'n_conv_per_stage_decoder': 1, 'conv_bias': False,
                'norm_op': 'torch.nn.modules.batchnorm.BatchNorm2d',
                'norm_op_kwargs': {'eps': 1e-3, 'momentum': 0.01, 'affine': True},
                'dropout_op': 'torch.nn.Dropout2d', 'dropout_op_kwargs': {'p': 0.2, 'inplace': False},
                'nonlin': 'torch.nn.ReLU', 'nonlin_kwargs': {'inplace': True}, 'deep_supervision': True,
                'block': f'{DNA}.building_blocks.residual.BottleneckD', 'bottleneck_channels': [2, [3, 2], 4],
                'stem_channels': 5,
            },
            '_kw_requires_import': REQUIRES_IMPORT + ['block'],
        },
    },
    {
        'name': 'plain_nonlin_first_aniso3d',
        'input_shape': [1, 2, 8, 12, 16],
        'output_channels': 3,
        'architecture': {
            'network_class_name': f'{DNA}.architectures.unet.PlainConvUNet',
            'arch_kwargs': {
                'n_stages': 3, 'features_per_stage': [3, 5, 7], 'conv_op': 'torch.nn.modules.conv.Conv3d',
                'kernel_sizes': [[1, 3, 3], 3, [3, 3, 3]], 'strides': [[1, 1, 1], [1, 2, 2], 2],
                'n_conv_per_stage': [1, 2, 1], 'n_conv_per_stage_decoder': [1, 2], 'conv_bias': True,
                'norm_op': 'torch.nn.modules.instancenorm.InstanceNorm3d',
                'norm_op_kwargs': {'eps': 1e-5, 'affine': True},
                'dropout_op': 'torch.nn.modules.dropout.Dropout3d', 'dropout_op_kwargs': {'p': 0.5},
                'nonlin': 'torch.nn.modules.activation.LeakyReLU',
                'nonlin_kwargs': {'negative_slope': 0.1, 'inplace': False},
                'nonlin_first': True,
            },
            '_kw_requires_import': REQUIRES_IMPORT,
        },
    },
    {
        'name': 'resenc_basic_2stage3d',
        'input_shape': [1, 1, 8, 8, 4],
        'output_channels': 2,
        'architecture': {
            'network_class_name': f'{DNA}.architectures.unet.ResidualEncoderUNet',
            'arch_kwargs': {
                'n_stages': 2, 'features_per_stage': 3, 'conv_op': 'torch.nn.Conv3d',
                'kernel_sizes': [[3, 3, 1], [3, 3, 3]], 'strides': [[1, 1, 1], [2, 2, 1]],
                'n_blocks_per_stage': [2, 1], 'n_conv_per_stage_decoder': [2],
                'norm_op': 'torch.nn.InstanceNorm3d', 'norm_op_kwargs': {'eps': 1e-5, 'affine': False},
                'dropout_op': None, 'dropout_op_kwargs': None,
                'nonlin': 'torch.nn.LeakyReLU', 'nonlin_kwargs': None,
                'block': f'{DNA}.building_blocks.residual.BasicBlockD',
            },
            '_kw_requires_import': REQUIRES_IMPORT + ['block'],
        },
    },
]


def build(architecture, input_channels, output_channels):
    """As nnU-Net's get_network_from_plans at inference: import the named classes, deep supervision off."""
    kwargs = dict(architecture['arch_kwargs'])
    for key in architecture['_kw_requires_import']:
        if kwargs.get(key) is not None:
            kwargs[key] = pydoc.locate(kwargs[key])
    kwargs['deep_supervision'] = False
    network_class = pydoc.locate(architecture['network_class_name'])
    return network_class(input_channels=input_channels, num_classes=output_channels, **kwargs)


def io_channels(dataset):
    """nnU-Net's rule: inputs = channels in dataset.json; outputs = foreground regions or all labels."""
    labels = {k: v for k, v in dataset['labels'].items() if k != 'ignore'}
    has_regions = any(isinstance(v, list) and len(v) > 1 for v in labels.values())
    if has_regions:
        outputs = sum(1 for v in labels.values() if set(v if isinstance(v, list) else [v]) != {0})
    else:
        outputs = len({int(i) for v in labels.values() for i in (v if isinstance(v, list) else [v])})
    return len(dataset['channel_names']), outputs


def test_input(shape):
    grids = np.meshgrid(*[np.arange(s, dtype=np.float64) for s in shape], indexing='ij')
    n, c, i0, i1 = grids[:4]
    i2 = grids[4] if len(shape) == 5 else np.zeros_like(i0)
    x = np.sin(0.31 * i0 + 0.17 * i1 + 0.23 * i2 + 1.1 * c + 0.5 * n) + 0.5 * np.cos(0.05 * i0 * i1 - 0.07 * i2 + c)
    return torch.from_numpy(x.astype(np.float32))


def name_hash(name):
    return sum((j + 1) * ord(ch) for j, ch in enumerate(name)) % 997


def formula_weights(network):
    """Deterministic weights: one value sequence per distinct tensor, named by the smallest of its keys
    (aliases share a tensor); scaled so that activations stay of order one."""
    groups = {}
    for key, tensor in network.state_dict().items():
        groups.setdefault(tensor.data_ptr(), []).append((key, tensor))
    with torch.no_grad():
        for members in groups.values():
            name = min(key for key, _ in members)
            tensor = members[0][1]
            if not tensor.is_floating_point():  # num_batches_tracked
                tensor.zero_()
                continue
            i = np.arange(tensor.numel(), dtype=np.float64)
            s = np.sin(0.9 * i + 0.1 * name_hash(name) + 0.3)
            if name.endswith('running_var'):
                values = 0.5 + 0.25 * (1.0 + s)
            elif tensor.dim() > 1:
                values = s / math.sqrt(tensor.numel() / tensor.shape[0])
            elif name.endswith('weight'):
                values = 1.0 + 0.3 * s
            else:  # biases, running means
                values = 0.2 * s
            tensor.copy_(torch.from_numpy(values.astype(np.float32)).reshape(tensor.shape))


def record(name, network, shape, extra):
    network.eval()
    x = test_input(shape)
    with torch.no_grad():
        logits = network(x)
    rng = np.random.RandomState(911)
    positions = [[int(rng.randint(0, s)) for s in logits.shape] for _ in range(64)]
    state = network.state_dict()
    distinct = {t.data_ptr(): t for t in state.values()}
    params = {p.data_ptr(): p.numel() for p in network.parameters()}
    l64 = logits.double()
    dims = [0] + list(range(2, logits.dim()))
    return dict(name=name, **extra, inputShape=list(shape), outputShape=list(logits.shape),
                numKeys=len(state), numDistinctTensors=len(distinct), numParameters=sum(params.values()),
                positions=positions, values=[float('%.9g' % logits[tuple(p)].item()) for p in positions],
                channelSums=[float('%.12g' % v) for v in l64.sum(dim=dims).tolist()],
                channelAbsSums=[float('%.12g' % v) for v in l64.abs().sum(dim=dims).tolist()])


def dump_weights(weights, folder):
    os.makedirs(folder, exist_ok=True)
    index = []
    for i, (key, tensor) in enumerate(weights.items()):
        t = tensor.contiguous()
        file = f'{i}.bin'
        t.numpy().tofile(os.path.join(folder, file))
        index.append(dict(key=key, shape=list(t.shape), dtype=str(t.dtype).replace('torch.', ''), file=file))
    with open(os.path.join(folder, 'index.json'), 'w') as f:
        json.dump(index, f)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--fixtures', required=True)
    parser.add_argument('--out', required=True)
    parser.add_argument('--dump-weights')
    args = parser.parse_args()
    torch.set_num_threads(1)
    cases = []
    for name, folder, fold in CHECKPOINT_CASES:
        model = os.path.join(args.fixtures, folder)
        with open(os.path.join(model, 'plans.json')) as f:
            plans = json.load(f)
        with open(os.path.join(model, 'dataset.json')) as f:
            dataset = json.load(f)
        configuration = plans['configurations']['3d_fullres']
        inputs, outputs = io_channels(dataset)
        network = build(configuration['architecture'], inputs, outputs)
        checkpoint = torch.load(os.path.join(model, f'fold_{fold}', 'checkpoint_final.pth'), map_location='cpu')
        network.load_state_dict(checkpoint['network_weights'])
        if args.dump_weights:
            dump_weights(checkpoint['network_weights'], os.path.join(args.dump_weights, name))
        extra = dict(kind='checkpoint', model=folder, fold=fold, inputChannels=inputs, outputChannels=outputs)
        cases.append(record(name, network, [1, inputs] + configuration['patch_size'], extra))
    for case in SYNTHETIC_CASES:
        shape = case['input_shape']
        network = build(case['architecture'], shape[1], case['output_channels'])
        formula_weights(network)
        extra = dict(kind='synthetic', architecture=case['architecture'], inputChannels=shape[1],
                     outputChannels=case['output_channels'])
        cases.append(record(case['name'], network, shape, extra))
    with open(args.out, 'w') as f:
        json.dump(dict(generator='make_network_reference.py', dna='0.3.1', torch=torch.__version__, cases=cases),
                  f, separators=(',', ':'))
        f.write('\n')


if __name__ == '__main__':
    main()
