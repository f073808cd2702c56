"""Near-duplicate photos between what training sees and what is only measured (more-breeds-224 is web-scraped:
the same photo may sit in two of its splits, or in Stanford Dogs). Two photos count as the same photo when the
cosine of their pooled features (DedogBench features, both backbones together) is at least --cosine (0.97; photos
merely of the same breed stay below 0.9). Prints each pair found: the measured photo, the trained one, the cosine.
"""
import argparse, numpy as np
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("features", type=Path)
parser.add_argument("--cosine", type=float, default=0.97)
args = parser.parse_args()
paths = [line.split("\t")[0] for line in open(args.features.with_suffix(".tsv"))]
x = np.fromfile(args.features.with_suffix(".f32"), dtype=np.float32).reshape(len(paths), -1)
x /= np.linalg.norm(x, axis=1, keepdims=True) + 1e-12
stanford_test = {line.split("\t")[0] for line in open(next(Path(p) for p in paths if "stanford-dogs-224" in p).parents[1] / "splits/test.txt")}


def measured(p):
    return Path(p).name.startswith("test_") or "/".join(Path(p).parts[-2:]) in stanford_test


test = np.array([i for i, p in enumerate(paths) if measured(p)])
train = np.array([i for i, p in enumerate(paths) if not measured(p)])
found = 0
for start in range(0, len(test), 512):
    block = test[start:start + 512]
    cosines = x[block] @ x[train].T
    for row, i in enumerate(block):
        j = int(np.argmax(cosines[row]))
        if cosines[row, j] >= args.cosine:
            found += 1
            print(f"{paths[i]}\t{paths[train[j]]}\t{cosines[row, j]:.4f}")
print(f"# {found} measured photos with a near-duplicate in what training sees", flush=True)
