#!/usr/bin/env python3
"""How far a breed taught from 3 photos reaches, as the likeness of those photos is capped (issue 72): a numpy
rebuild of `TaughtBreed.row` (the row's direction, length and bias; the likeness ρ of the taught photos, each against
the mean of the others, moved 0.25 of the way to 1) appended to a model's breed heads, and the share of the breed's
other photos whose top breed it then is (the combined calibrated probabilities, as `Model.decide` ranks them; the
verdict's other rules are left out, so it is the top breed, not "named").

Three photos taken alike (one photographer's frame, one session) have a likeness well above a breed's typical 0.66
(`TaughtBreed.singlePhotoLikeness`), and the row they make reaches few of the breed's other photos: capping the
likeness there is the candidate change. What it costs (other breeds' answers changed) is not measured here:
`scripts/bench-teaching` does that.

  taught_likeness.py --model MODEL --features FEATURES [--seeds 1,2,3] [--caps none,0.75,0.7,0.66]
FEATURES: `DedogBench features MODEL LIST OUT` of one breed's photos (the draws: random.Random(seed).sample of their
file names, sorted, 3 at a time, as docs/accuracy.md's American Bulldog draws).
"""
import argparse, random, sys
from pathlib import Path
import numpy as np
sys.path.insert(0, str(Path(__file__).parent))
from dedog_model import read_model, log_softmax, read_features, breed_heads

p = argparse.ArgumentParser()
p.add_argument("--model", required=True)
p.add_argument("--features", type=Path, required=True)
p.add_argument("--seeds", default="1,2,3")
p.add_argument("--caps", default="none,0.75,0.7,0.66")
a = p.parse_args()
desc, tensor = read_model(a.model)
backbones = desc["backbones"]
paths, X = read_features(a.features, len(backbones))
X = X.astype(np.float64)
names = [Path(x).name for x in paths]
heads, combined_t = breed_heads(desc, tensor)
unit = lambda v: v / np.linalg.norm(v)


def row(photos, W, b, P, cap):
    """TaughtBreed.row, with the likeness capped at `cap` (None: not capped)."""
    units = [unit(x) for x in photos]
    direction = unit(np.mean(units, 0))
    length = np.mean([np.linalg.norm(x) for x in photos])
    alike = np.mean([units[i] @ unit(np.mean([u for j, u in enumerate(units) if j != i], 0)) for i in range(len(units))])
    if cap is not None:
        alike = min(alike, cap)
    rho = alike + 0.25 * (1 - alike)
    k = np.linalg.norm(W, axis=1).mean()
    target = np.sort(np.einsum("ij,ij->i", W, P) * length + b)[len(b) // 2]
    return direction * k, target - k * length * rho, alike


for cap_text in a.caps.split(","):
    cap = None if cap_text == "none" else float(cap_text)
    cells = []
    for seed in map(int, a.seeds.split(",")):
        taught = [sorted(names).index(n) for n in random.Random(seed).sample(sorted(names), 3)]
        order = np.argsort(names)
        idx = [order[i] for i in taught]
        rest = [i for i in range(len(names)) if i not in idx]
        lp, alikes = 0, []
        for b, (W, bias, P, t) in enumerate(heads):
            r, rb, alike = row([X[i, b] for i in idx], W, bias, P, cap)
            alikes.append(alike)
            lp = lp + log_softmax((X[rest, b] @ np.vstack([W, r]).T + np.append(bias, rb)) / t) / len(heads)
        top = np.exp(log_softmax(lp / combined_t)).argmax(1)
        cells.append((np.mean(top == len(heads[0][1])), np.mean(alikes)))
    print(f"likeness capped at {cap_text}: " + "; ".join(f"seed {s}: {r:.1%} (likeness {l:.3f})" for s, (r, l) in
          zip(a.seeds.split(","), cells)) + f"; mean {np.mean([c[0] for c in cells]):.1%}")
