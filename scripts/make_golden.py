"""Golden tensors for the Lite1 and Lite2 backbones, from an independent implementation.

The reference is the PyPI package efficientnet-lite-pytorch 0.1.0 (which reproduces the shared Lite0 golden
logits to 3e-6), loaded with exactly the weights of dedog's model file (F16 convolution weights widened, as
dedog widens them), so that only the engines differ. The photo is ../shared's reference photo, preprocessed as
the shared Lite0 reference describes, at each variant's resolution. Writes, per variant, Tests/Golden/<arch>/:
input.f32 [1,3,S,S], features.f32 [1,1280], logits.f32 [1,1000] (raw little-endian float32) and top5.json.
"""
import argparse, json
from pathlib import Path

import numpy as np
import torch
from PIL import Image
from safetensors.torch import load_file
from efficientnet_lite_pytorch import EfficientNet

parser = argparse.ArgumentParser()
parser.add_argument("--root", type=Path, required=True)
parser.add_argument("--photo", type=Path, required=True)
args = parser.parse_args()


def preprocess(path, size):
    """Shorter side to int(size / 0.875) with Pillow's BILINEAR, centre crop (half to even), (x - 127) / 128."""
    img = Image.open(path).convert("RGB")
    w, h = img.size
    short = int(size / 0.875)
    new = (short, short * h // w) if w <= h else (short * w // h, short)
    img = img.resize(new, Image.BILINEAR)
    left, top = round((new[0] - size) / 2), round((new[1] - size) / 2)
    x = (np.asarray(img.crop((left, top, left + size, top + size)), np.float32) - 127) / 128
    return torch.from_numpy(x.transpose(2, 0, 1)[None].copy())


for variant, size in [("lite1", 240), ("lite2", 260)]:
    arch = f"efficientnet-{variant}"
    tensors = load_file(str(args.root / f"models/{arch}-imagenet.safetensors"))
    net = EfficientNet.from_name(arch, image_size=size).eval()
    state = net.state_dict()
    for name, value in tensors.items():
        assert state[name].shape == value.shape, name
        state[name] = value.to(torch.float32)
    net.load_state_dict(state)
    x = preprocess(args.photo, size)
    with torch.no_grad():
        features = net.extract_features(x).mean((2, 3))
        logits = net(x)
    out = args.root / "Tests/Golden" / arch
    out.mkdir(parents=True, exist_ok=True)
    for name, t in [("input", x), ("features", features), ("logits", logits)]:
        t.numpy().astype("<f4").tofile(out / f"{name}.f32")
    p = torch.softmax(logits[0], 0)
    top = torch.topk(p, 5)
    (out / "top5.json").write_text(json.dumps([{"index": int(i), "probability": round(float(v), 6)}
                                               for v, i in zip(top.values, top.indices)], indent=1) + "\n")
    print(arch, [int(i) for i in top.indices], [round(float(v), 4) for v in top.values])
