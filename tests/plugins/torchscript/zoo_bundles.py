"""Bundles laid out as MONAI's model zoo lays them out, one per zoo 3-D segmentation bundle the tests name,
with that bundle's inference config (the same transforms, inferer and arguments, the config syntax it uses:
references, "$" expressions, YAML, string booleans, its Lambdad) and metadata (channel counts and names),
around a tiny network scripted with torch.jit that has the bundle's input and output channels.

    python3 zoo_bundles.py ROOT

The networks compute each output channel from the input channels and their 3x3(x3) means with 1x1 kernels:
class k's logit is a_k s + b_k of the smoothed intensity s, the slopes rising with k, so the argmax picks
intensity bands (band edges given per bundle), and region channels are thresholds of one input channel each.
"""
import json
import os
import sys

import torch

torch.manual_seed(0)


class Tiny(torch.nn.Module):
    """Each output channel from the input channels and their 3x3(x3) means, with 1x1 kernels; 2-D or 3-D."""
    def __init__(self, channels_in, channels_out, dims=3):
        super().__init__()
        conv, pool = (torch.nn.Conv3d, torch.nn.AvgPool3d) if dims == 3 else (torch.nn.Conv2d, torch.nn.AvgPool2d)
        self.raw = conv(channels_in, channels_out, 1)
        self.smooth = conv(channels_in, channels_out, 1, bias=False)
        self.pool = pool(3, 1, 1)

    def forward(self, x):
        return self.raw(x) + self.smooth(self.pool(x))


def banded(channels_out, edges, dims=3, steepness=10.0):
    """One input channel; class k (< len(edges) + 1) wins where the smoothed intensity lies between edges
    k-1 and k; the classes past those never win."""
    net = Tiny(1, channels_out, dims).eval()
    with torch.no_grad():
        net.raw.weight.zero_()
        net.raw.bias.fill_(-1000.0)
        net.smooth.weight.zero_()
        bias = 0.0
        for k in range(len(edges) + 1):
            if k > 0:
                bias -= steepness * edges[k - 1]
            net.smooth.weight[k, 0] = steepness * k
            net.raw.bias[k] = bias
    return net


def regions(channels_in, sources, edges, steepness=4.0):
    """Output channel c: steepness * (smoothed input channel sources[c] - edges[c]), a region's logit."""
    net = Tiny(channels_in, len(sources)).eval()
    with torch.no_grad():
        net.raw.weight.zero_()
        net.smooth.weight.zero_()
        for c, (source, edge) in enumerate(zip(sources, edges)):
            net.smooth.weight[c, source] = steepness
            net.raw.bias[c] = -steepness * edge
    return net


def network_format(channels_in, names_in, channels_out, names_out, shape, patch=True, outputs_def="channel_def"):
    def part(channels, names, kind):
        return {"type": "image", "format": kind, "num_channels": channels, "spatial_shape": shape, "dtype": "float32",
                "value_range": [], "is_patch_data": patch, ("channel_def" if kind != "segmentation" else outputs_def):
                {str(i): n for i, n in enumerate(names)}}
    return {"inputs": {"image": part(channels_in, names_in, "magnitude")},
            "outputs": {"pred": part(channels_out, names_out, "segmentation")}}


def evaluator_part(amp=True):
    """What follows the sections in every zoo inference config: Python MedSeg never needs."""
    return {
        "dataset": {"_target_": "Dataset", "data": "$[{'image': i} for i in @datalist]", "transform": "@preprocessing"},
        "dataloader": {"_target_": "DataLoader", "dataset": "@dataset", "batch_size": 1, "shuffle": False, "num_workers": 4},
        "handlers": [{"_target_": "CheckpointLoader", "load_path": "$@bundle_root + '/models/model.pt'",
                      "load_dict": {"model": "@network"}},
                     {"_target_": "StatsHandler", "iteration_log": False}],
        "evaluator": {"_target_": "SupervisedEvaluator", "device": "@device", "val_data_loader": "@dataloader",
                      "network": "@network", "inferer": "@inferer", "postprocessing": "@postprocessing",
                      "val_handlers": "@handlers", "amp": amp},
        "initialize": ["$setattr(torch.backends.cudnn, 'benchmark', True)"],
        "run": ["$@evaluator.run()"]}


def common(network_def):
    return {"imports": ["$import glob", "$import os"], "bundle_root": ".", "output_dir": "$@bundle_root + '/eval'",
            "dataset_dir": "/workspace/data", "datalist": "$list(sorted(glob.glob(@dataset_dir + '/*.nii.gz')))",
            "device": "$torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')", "network_def": network_def,
            "network": "$@network_def.to(@device)"}


BRATS_LAMBDA = "$lambda x: torch.where(x[[2]] > 0, 4, torch.where(x[[0]] > 0, 1, torch.where(x[[1]] > 0, 2, 0)))"


def brats():
    config = common({"_target_": "SegResNet", "blocks_down": [1, 2, 2, 4], "blocks_up": [1, 1, 1], "init_filters": 16,
                     "in_channels": 4, "out_channels": 3, "dropout_prob": 0.2})
    config |= {
        "preprocessing": {"_target_": "Compose", "transforms": [
            {"_target_": "LoadImaged", "keys": "image", "image_only": False},
            {"_target_": "NormalizeIntensityd", "keys": "image", "nonzero": True, "channel_wise": True}]},
        "inferer": {"_target_": "SlidingWindowInferer", "roi_size": [240, 240, 160], "sw_batch_size": 1, "overlap": 0.5},
        "postprocessing": {"_target_": "Compose", "transforms": [
            {"_target_": "Activationsd", "keys": "pred", "sigmoid": True},
            {"_target_": "Invertd", "keys": "pred", "transform": "@preprocessing", "orig_keys": "image",
             "meta_keys": "pred_meta_dict", "nearest_interp": False, "to_tensor": True},
            {"_target_": "AsDiscreted", "keys": "pred", "threshold": 0.5},
            {"_target_": "Lambdad", "keys": "pred", "func": BRATS_LAMBDA},
            {"_target_": "SaveImaged", "keys": "pred", "meta_keys": "pred_meta_dict", "output_dir": "@output_dir",
             "output_postfix": "seg", "output_dtype": "uint8", "resample": False, "squeeze_end_dims": True}]}}
    config |= evaluator_part()
    shape = ["8*n", "8*n", "8*n"]
    metadata = {"name": "BraTS MRI segmentation", "version": "0.4.2",
                "network_data_format": network_format(4, ["T1c", "T1", "T2", "FLAIR"], 3,
                                                      ["Tumor core", "Whole tumor", "Enhancing tumor"], shape)}
    # tumour core from T1c, whole tumour from FLAIR, enhancing from T1 (z-scores after the normalisation)
    return config, metadata, regions(4, [0, 3, 1], [1.0, 1.0, 1.5]), "inference.json"


def prostate():
    config = common({"_target_": "UNet", "spatial_dims": 3, "in_channels": 1, "out_channels": 3,
                     "channels": [16, 32, 64, 128, 256, 512], "strides": [2, 2, 2, 2, 2], "num_res_units": 4,
                     "norm": "batch", "act": "prelu", "dropout": 0.15})
    config |= {
        "preprocessing": {"_target_": "Compose", "transforms": [
            {"_target_": "LoadImaged", "keys": "image"},
            {"_target_": "EnsureChannelFirstd", "keys": "image"},
            {"_target_": "Orientationd", "keys": "image", "axcodes": "RAS"},
            {"_target_": "Spacingd", "keys": "image", "pixdim": [0.5, 0.5, 0.5], "mode": "bilinear"},
            {"_target_": "ScaleIntensityd", "keys": "image", "minv": 0, "maxv": 1},
            {"_target_": "NormalizeIntensityd", "keys": "image"},
            {"_target_": "EnsureTyped", "keys": "image"}]},
        "inferer": {"_target_": "SlidingWindowInferer", "roi_size": [96, 96, 96], "sw_batch_size": 4, "overlap": 0.5},
        "postprocessing": {"_target_": "Compose", "transforms": [
            {"_target_": "AsDiscreted", "keys": "pred", "argmax": True},
            {"_target_": "KeepLargestConnectedComponentd", "keys": "pred", "applied_labels": [1, 2]},
            {"_target_": "Invertd", "keys": "pred", "transform": "@preprocessing", "orig_keys": "image",
             "meta_key_postfix": "meta_dict", "nearest_interp": False, "to_tensor": True},
            {"_target_": "SaveImaged", "keys": "pred", "resample": False, "meta_keys": "pred_meta_dict",
             "output_dir": "@output_dir"}]}}
    config |= evaluator_part()
    metadata = {"name": "Prostate MRI anatomy", "version": "0.2.0",
                "network_data_format": network_format(1, ["image"], 3, ["background", "central gland", "peripheral zone"],
                                                      [96, 96, 96])}
    # bands of the z-scored intensity: peripheral zone above 1.0, central gland above 2.0
    return config, metadata, banded(3, [1.0, 2.0]), "inference.json"


PEDIATRIC = """---
imports:
- "$import glob"
- "$import os"
- "$import scripts.monai_utils"
workflow_type: inference
input_channels: 1
output_classes: 4
output_channels: 4
bundle_root: "."
output_dir: "$@bundle_root + '/eval/dynunet_FT'"
dataset_dir: "/processed/Public/CT_TotalSegmentator/TS_split/test/"
data_list_file_path: "$@bundle_root + '/configs/TS_test.json'"
datalist: "$monai.data.load_decathlon_datalist(@data_list_file_path, data_list_key='validation')"
device: "$torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')"
spatial_size:
- 96
- 96
- 96
spatial_dims: "$len(@spatial_size)"
labels:
  background: 0
  liver: 1
  spleen: 2
  pancreas: 3
network_def:
  _target_: monai.networks.nets.DynUNet
  spatial_dims: "@spatial_dims"
  in_channels: "@input_channels"
  out_channels: "@output_channels"
  kernel_size: [3, 3, 3, 3, 3, 3]
  strides: [1, 2, 2, 2, 2, [2, 2, 1]]
  upsample_kernel_size: [2, 2, 2, 2, [2, 2, 1]]
  norm_name: "instance"
  deep_supervision: false
  res_block: true
network: "$@network_def.to(@device)"
image_key: image
preprocessing:
  _target_: Compose
  transforms:
  - _target_: LoadImaged
    keys: "@image_key"
    reader: ITKReader
  - _target_: EnsureChannelFirstd
    keys: "@image_key"
  - _target_: Orientationd
    keys: image
    axcodes: RAS
  - _target_: Spacingd
    keys:
    - "@image_key"
    pixdim:
    - 1.5
    - 1.5
    - 3.0
    mode:
    - bilinear
  - _target_: ScaleIntensityRanged
    keys: "@image_key"
    a_min: -250
    a_max: 400
    b_min: 0
    b_max: 1
    clip: true
  - _target_: CropForegroundd
    keys:
    - "@image_key"
    source_key: "@image_key"
    mode:
    - "minimum"
  - _target_: EnsureTyped
    keys: image
  - _target_: CastToTyped
    keys: "@image_key"
    dtype: "$torch.float32"
inferer:
  _target_: SlidingWindowInferer
  roi_size:
  - 96
  - 96
  - 96
  sw_batch_size: 4
  overlap: 0.75
postprocessing:
  _target_: Compose
  transforms:
  - _target_: Activationsd
    keys: pred
    softmax: true
  - _target_: Invertd
    keys: pred
    transform: "@preprocessing"
    orig_keys: image
    meta_key_postfix: meta_dict
    nearest_interp: false
    to_tensor: true
  - _target_: AsDiscreted
    keys: pred
    argmax: true
  - _target_: SaveImaged
    keys: pred
    meta_keys: pred_meta_dict
    output_dir: "@output_dir"
    separate_folder: false
    output_dtype: "$torch.int16"
"""


def pediatric():
    metadata = {"name": "CT-Ped-Abdominal-Seg", "version": "0.4.4",
                "network_data_format": network_format(1, ["image"], 4, ["background", "liver", "spleen", "pancreas"],
                                                      [96, 96, 96], outputs_def="label_def")}
    # bands of the intensity scaled from [-250, 400] HU to [0, 1]: liver 120 HU, spleen 200, pancreas 300
    return PEDIATRIC, metadata, banded(4, [0.51, 0.63, 0.77]), "inference.yaml"


def ventricular():
    config = common({"_target_": "UNet", "spatial_dims": 2, "in_channels": 1, "out_channels": 4,
                     "channels": [16, 32, 64, 128, 256], "strides": [2, 2, 2, 2], "num_res_units": 2})
    config |= {
        "preprocessing": {"_target_": "Compose", "transforms": [
            {"_target_": "LoadImaged", "keys": "image", "image_only": False},
            {"_target_": "EnsureChannelFirstd", "keys": "image"},
            {"_target_": "ScaleIntensityd", "keys": "image"},
            {"_target_": "EnsureTyped", "keys": "image", "device": "@device"}]},
        "inferer": {"_target_": "SliceInferer", "roi_size": [256, 256], "spatial_dim": 2},
        "postprocessing": {"_target_": "Compose", "transforms": [
            {"_target_": "Activationsd", "keys": "pred", "softmax": True},
            {"_target_": "Invertd", "keys": "pred", "transform": "@preprocessing", "orig_keys": "image",
             "meta_key_postfix": "meta_dict", "nearest_interp": False, "to_tensor": True},
            {"_target_": "AsDiscreted", "keys": "pred", "argmax": True},
            {"_target_": "SaveImaged", "keys": "pred", "meta_keys": "pred_meta_dict", "output_dir": "@output_dir"}]}}
    config |= evaluator_part()
    metadata = {"name": "Ventricular short axis 3 label segmentation", "version": "0.3.4",
                "network_data_format": network_format(1, ["image"], 4, ["background", "lv_pool", "myocardium", "rv_pool"],
                                                      [256, 256], patch=False)}
    # bands of the intensity scaled to [0, 1]: myocardium 0.6, right ventricle 0.8, left ventricle 1.0
    return config, metadata, banded(4, [0.5, 0.7, 0.9], dims=2), "inference.json"


def whole_body():
    config = {"displayable_configs": {"highres": True, "sw_overlap": 0.25, "sw_batch_size": 1}}
    config |= common({"_target_": "SegResNet", "spatial_dims": 3, "in_channels": 1, "out_channels": 105,
                      "init_filters": 32, "blocks_down": [1, 2, 2, 4], "blocks_up": [1, 1, 1], "dropout_prob": 0.2})
    config |= {
        "image_key": "image", "output_ext": ".nii.gz", "output_dtype": "$numpy.float32", "output_postfix": "trans",
        "separate_folder": True,
        "pixdim": "$[1.5, 1.5, 1.5] if @displayable_configs#highres else [3.0, 3.0, 3.0]",
        "modelname": "$'model.pt' if @displayable_configs#highres else 'model_lowres.pt'",
        "preprocessing": {"_target_": "Compose", "transforms": [
            {"_target_": "LoadImaged", "keys": "@image_key"},
            {"_target_": "EnsureTyped", "keys": "@image_key"},
            {"_target_": "EnsureChannelFirstd", "keys": "@image_key"},
            {"_target_": "Orientationd", "keys": "@image_key", "axcodes": "RAS"},
            {"_target_": "Spacingd", "keys": "@image_key", "pixdim": "@pixdim", "mode": "bilinear"},
            {"_target_": "NormalizeIntensityd", "keys": "@image_key", "nonzero": True},
            {"_target_": "ScaleIntensityd", "keys": "@image_key", "minv": -1.0, "maxv": 1.0}]},
        "inferer": {"_target_": "SlidingWindowInferer", "roi_size": [96, 96, 96],
                    "sw_batch_size": "@displayable_configs#sw_batch_size", "overlap": "@displayable_configs#sw_overlap",
                    "padding_mode": "replicate", "mode": "gaussian",
                    "device": "$torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')"},
        "postprocessing": {"_target_": "Compose", "transforms": [
            {"_target_": "Activationsd", "keys": "pred", "softmax": True},
            {"_target_": "AsDiscreted", "keys": "pred", "argmax": True},
            {"_target_": "Invertd", "keys": "pred", "transform": "@preprocessing", "orig_keys": "@image_key",
             "nearest_interp": True, "to_tensor": True},
            {"_target_": "SaveImaged", "keys": "pred", "output_dir": "@output_dir", "output_ext": "@output_ext",
             "output_dtype": "@output_dtype", "output_postfix": "@output_postfix",
             "separate_folder": "@separate_folder"}]},
        "checkpointloader": {"_target_": "CheckpointLoader", "load_path": "$@bundle_root + '/models/' + @modelname",
                             "load_dict": {"model": "@network"}}}
    config |= evaluator_part()
    config["initialize"] = ["$setattr(torch.backends.cudnn, 'benchmark', True)", "$@checkpointloader(@evaluator)"]
    names = ["background", "spleen", "kidney_right", "kidney_left"] + [f"structure_{i}" for i in range(4, 105)]
    metadata = {"name": "Whole body CT segmentation", "version": "0.2.0",
                "network_data_format": network_format(1, ["image"], 105, names, [96, 96, 96])}
    # bands of the intensity after the z-score of its non-zero voxels and the scaling to [-1, 1]
    return config, metadata, banded(105, [0.1, 0.4, 0.7]), "inference.json"


def whole_brain():
    config = common({"_target_": "scripts.networks.unest_base_patch_4.UNesT", "in_channels": 1, "out_channels": 133,
                     "patch_size": 4, "depths": [2, 2, 8], "embed_dim": [128, 256, 512], "num_heads": [4, 8, 16]})
    config |= {
        "preprocessing": {"_target_": "Compose", "transforms": [
            {"_target_": "LoadImaged", "keys": "image"},
            {"_target_": "EnsureChannelFirstd", "keys": "image"},
            {"_target_": "NormalizeIntensityd", "keys": "image", "nonzero": "True", "channel_wise": "True"},
            {"_target_": "EnsureTyped", "keys": "image"}]},
        "inferer": {"_target_": "SlidingWindowInferer", "roi_size": [96, 96, 96], "sw_batch_size": 4, "overlap": 0.7},
        "postprocessing": {"_target_": "Compose", "transforms": [
            {"_target_": "Activationsd", "keys": "pred", "softmax": True},
            {"_target_": "Invertd", "keys": "pred", "transform": "@preprocessing", "orig_keys": "image",
             "meta_key_postfix": "meta_dict", "nearest_interp": False, "to_tensor": True},
            {"_target_": "AsDiscreted", "keys": "pred", "argmax": True},
            {"_target_": "SaveImaged", "keys": "pred", "meta_keys": "pred_meta_dict", "output_dir": "@output_dir"}]}}
    config |= evaluator_part(amp=False)
    config["handlers"][0]["strict"] = "True"
    names = ["background"] + [f"region_{i}" for i in range(1, 133)]
    metadata = {"name": "Whole brain large UNEST segmentation", "version": "0.2.0",
                "network_data_format": network_format(1, ["image"], 133, names, [96, 96, 96])}
    # bands of the z-score of the non-zero voxels
    return config, metadata, banded(133, [0.3, 1.2, 2.4]), "inference.json"


def spleen():
    config = common({"_target_": "UNet", "spatial_dims": 3, "in_channels": 1, "out_channels": 2,
                     "channels": [16, 32, 64, 128, 256], "strides": [2, 2, 2, 2], "num_res_units": 2, "norm": "batch"})
    config |= {
        "image_key": "image", "output_ext": ".nii.gz", "output_dtype": "$numpy.float32", "output_postfix": "trans",
        "separate_folder": True, "load_pretrain": True,
        "preprocessing": {"_target_": "Compose", "transforms": [
            {"_target_": "LoadImaged", "keys": "@image_key"},
            {"_target_": "EnsureChannelFirstd", "keys": "@image_key"},
            {"_target_": "Orientationd", "keys": "@image_key", "axcodes": "RAS"},
            {"_target_": "Spacingd", "keys": "@image_key", "pixdim": [1.5, 1.5, 2.0], "mode": "bilinear"},
            {"_target_": "ScaleIntensityRanged", "keys": "@image_key", "a_min": -57, "a_max": 164, "b_min": 0,
             "b_max": 1, "clip": True},
            {"_target_": "EnsureTyped", "keys": "@image_key"}]},
        "inferer": {"_target_": "SlidingWindowInferer", "roi_size": [96, 96, 96], "sw_batch_size": 4, "overlap": 0.5},
        "postprocessing": {"_target_": "Compose", "transforms": [
            {"_target_": "Activationsd", "keys": "pred", "softmax": True},
            {"_target_": "Invertd", "keys": "pred", "transform": "@preprocessing", "orig_keys": "@image_key",
             "nearest_interp": False, "to_tensor": True},
            {"_target_": "AsDiscreted", "keys": "pred", "argmax": True},
            {"_target_": "SaveImaged", "keys": "pred", "output_dir": "@output_dir", "output_ext": "@output_ext",
             "output_dtype": "@output_dtype", "output_postfix": "@output_postfix",
             "separate_folder": "@separate_folder"}]},
        "checkpointloader": {"_target_": "CheckpointLoader", "load_path": "$@bundle_root + '/models/model.pt'",
                             "load_dict": {"model": "@network"}}}
    config |= evaluator_part()
    config["initialize"] = ["$monai.utils.set_determinism(seed=123)",
                            "$@checkpointloader(@evaluator) if @load_pretrain else None"]
    metadata = {"name": "Spleen CT segmentation", "version": "0.5.4",
                "network_data_format": network_format(1, ["image"], 2, ["background", "spleen"], [96, 96, 96])}
    # the spleen brighter than 100 HU: above 0.71 of [-57, 164] scaled to [0, 1]
    return config, metadata, banded(2, [0.71]), "inference.json"


BUNDLES = {"brats_mri_segmentation": brats, "prostate_mri_anatomy": prostate,
           "pediatric_abdominal_ct_segmentation": pediatric, "ventricular_short_axis_3label": ventricular,
           "wholeBody_ct_segmentation": whole_body, "wholeBrainSeg_Large_UNEST_segmentation": whole_brain,
           "spleen_ct_segmentation": spleen}


def write(root, name, make):
    config, metadata, net, config_name = make()
    folder = os.path.join(root, name)
    os.makedirs(os.path.join(folder, "configs"))
    os.makedirs(os.path.join(folder, "models"))
    with open(os.path.join(folder, "configs", config_name), "w") as f:
        f.write(config if isinstance(config, str) else json.dumps(config, indent=1))
    with open(os.path.join(folder, "configs", "metadata.json"), "w") as f:
        json.dump(metadata, f, indent=1)
    torch.jit.script(net).save(os.path.join(folder, "models", "model.ts"))


if __name__ == "__main__":
    for bundle, maker in BUNDLES.items():
        write(sys.argv[1], bundle, maker)
