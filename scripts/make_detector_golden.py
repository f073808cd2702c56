#!/usr/bin/env python3
"""The golden tensors of the detector's neck (Tests/DedogBreedModelTests/Fixtures/detector-neck-golden.safetensors):
made-up fine and coarse maps (5x7 and 3x4 cells, channels-last) through the neck of a detector file, computed by
PyTorch from the file's own tensors (train_dog_detector.py's `Neck`, nothing of dedog's engine).

  make_detector_golden.py models/dog-detector-lite1.safetensors OUT.safetensors
"""
import json, os, struct, sys
import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_dog_detector import Neck, write_safetensors


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        dtype = {"F32": np.float32, "F16": np.float16}[e["dtype"]]
        a, b = e["data_offsets"]
        out[name] = np.frombuffer(data[a:b], dtype=dtype).astype(np.float32).reshape(e["shape"])
    return out, header.get("__metadata__", {})


def main():
    source, out = sys.argv[1], sys.argv[2]
    tensors, metadata = read_safetensors(source)
    d = json.loads(metadata["dedog.detector"])
    p = d["tensorPrefix"]
    fine_c, coarse_c = tensors[p + "fine.weight"].shape[1], tensors[p + "coarse.weight"].shape[1]
    neck = Neck(fine_c, coarse_c, d["channels"], d["blocks"]).double()
    with torch.no_grad():
        for name, module in neck.named_modules():
            if isinstance(module, torch.nn.Conv2d):
                # Neck's module names (depthwise.0, pointwise.0) against the file's (block0.depthwise, block0.pointwise).
                if name.startswith("depthwise.") or name.startswith("pointwise."):
                    kind, i = name.split(".")
                    key = f"{p}block{i}.{kind}"
                else:
                    key = p + name
                module.weight.copy_(torch.from_numpy(tensors[key + ".weight"]).reshape(module.weight.shape))
                module.bias.copy_(torch.from_numpy(tensors[key + ".bias"]))
    rng = np.random.default_rng(60)
    fine = rng.normal(0, 2, (5, 7, fine_c)).astype(np.float32)
    coarse = rng.normal(0, 2, (3, 4, coarse_c)).astype(np.float32)
    with torch.no_grad():
        y = neck(torch.from_numpy(fine).double().permute(2, 0, 1)[None], torch.from_numpy(coarse).double().permute(2, 0, 1)[None])
    output = y[0].permute(1, 2, 0).numpy().astype(np.float32)
    write_safetensors(out, [("fine", fine), ("coarse", coarse), ("output", output)],
                      {"source": os.path.basename(source), "made by": "scripts/make_detector_golden.py"})


if __name__ == "__main__":
    main()
