"""Fine-tunes the top of EfficientNet-Lite0 (blocks 14-15 and the head conv, BN statistics frozen) plus a
120-way classifier initialised from the ImageNet rows, on cached block-13 activations of the Stanford Dogs
train split (each image as is and mirrored). Selects the epoch on a stratified 10 % of the train split, then
reports the test split with the same mirror averaging dedog uses. Activations come from dedog's engine, with
dedog's preprocessing.
"""
import argparse, random, subprocess, sys, tempfile, time
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from lite0_torch import Lite0, load  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--root", type=Path, required=True)
p.add_argument("--data", type=Path, required=True)
p.add_argument("--bench", type=Path, required=True, help="the DedogBench binary")
p.add_argument("--epochs", type=int, default=6)
p.add_argument("--lr", type=float, default=1e-4)
args = p.parse_args()
torch.manual_seed(1)
random.seed(1)
torch.set_num_threads(2)

classes = (args.data / "classes.txt").read_text().split()
def split(name):
    return [(l.split("\t")[0], classes.index(l.split("\t")[1])) for l in (args.data / "splits" / name).read_text().splitlines() if l]
train_all, test = split("train.txt"), split("test.txt")
by_class = {}
for s in train_all:
    by_class.setdefault(s[1], []).append(s)
train, val = [], []
for c, items in sorted(by_class.items()):
    random.shuffle(items)
    val += items[:10]
    train += items[10:]

net = load(Lite0(), args.root / "models/efficientnet-lite0-imagenet.safetensors")
work = Path(tempfile.mkdtemp(prefix="dedog-finetune-"))

def activations(samples, mirror):
    """Block-13 outputs [n, 192, 7, 7] from dedog's engine (its golden test matches PyTorch's to 1e-3)."""
    listing, out = work / "list.txt", work / "act.f32"
    listing.write_text("\n".join(str(args.data / s[0]) for s in samples) + "\n")
    subprocess.run([str(args.bench), "activations", str(listing), str(out), "--stage", "block_13",
                    "--model", str(args.root / "models/efficientnet-lite0-imagenet.safetensors")]
                   + (["--mirror"] if mirror else []), check=True)
    return torch.from_numpy(np.fromfile(out, np.float32).reshape(len(samples), 192, 7, 7).copy())

t0 = time.time()
xs = {name: (activations(s, False), activations(s, True), torch.tensor([c for _, c in s]))
      for name, s in (("train", train), ("val", val), ("test", test))}
print(f"block-13 activations: {time.time() - t0:.0f} s", flush=True)

top = nn.Sequential(*list(net.blocks)[14:], net.head)
fc = nn.Linear(1280, 120)
dog_classes = args.data.parent.parent / "reference/efficientnet-lite0/dog_classes.tsv"
folders = {l.split("\t")[3]: int(l.split("\t")[0]) for l in dog_classes.read_text().splitlines()[1:]}
with torch.no_grad():
    for c, name in enumerate(classes):
        fc.weight[c] = net.fc.weight[folders[name]]
        fc.bias[c] = net.fc.bias[folders[name]]
model = nn.Sequential(top, nn.AdaptiveAvgPool2d(1), nn.Flatten(), fc)
for m in model.modules():
    if isinstance(m, nn.BatchNorm2d):
        m.eval()
        m.weight.requires_grad_(False)
        m.bias.requires_grad_(False)
opt = torch.optim.AdamW([q for q in model.parameters() if q.requires_grad], lr=args.lr, weight_decay=1e-4)
loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)

@torch.no_grad()
def accuracy(name):
    a, m, y = xs[name]
    logits = torch.cat([(model(a[i:i + 256]) + model(m[i:i + 256])) / 2 for i in range(0, len(y), 256)])
    top5 = logits.topk(5, 1).indices
    return (top5[:, 0] == y).float().mean().item(), (top5 == y[:, None]).any(1).float().mean().item()

def train_mode():
    model.train()
    for mod in model.modules():
        if isinstance(mod, nn.BatchNorm2d):
            mod.eval()

a, m, y = xs["train"]
inputs, labels = torch.cat([a, m]), torch.cat([y, y])
print(f"epoch 0: val top-1 {accuracy('val')[0]:.4f}", flush=True)
best = (0, None, None)
for epoch in range(1, args.epochs + 1):
    train_mode()
    order = torch.randperm(len(labels))
    t0 = time.time()
    for i in range(0, len(order), 64):
        idx = order[i:i + 64]
        opt.zero_grad()
        loss = loss_fn(model(inputs[idx]), labels[idx])
        loss.backward()
        opt.step()
    model.eval()
    v1, _ = accuracy("val")
    t1, t5 = accuracy("test")
    print(f"epoch {epoch}: {time.time() - t0:.0f} s, val top-1 {v1:.4f}; test top-1 {t1:.4f} top-5 {t5:.4f}", flush=True)
    if v1 > best[0]:
        best = (v1, t1, t5)
print(f"best validation epoch: val top-1 {best[0]:.4f}, test top-1 {best[1]:.4f}, top-5 {best[2]:.4f}")
