"""Finds photos of more-breeds-224 whose folder is probably not their breed (the data set's known faults: French
Bulldogs and Boston Terriers among the Bulldogs, web photos of other breeds everywhere).

Confident learning on dedog's own features: a softmax classifier over the 120 Stanford Dogs breeds and the 13 new
ones is trained on the pooled features of the Stanford train split and more-breeds' train and valid splits, in five
folds; each more-breeds photo is then answered by the classifier that did not see it. A photo is flagged when that
answer gives its own folder less than --own (0.05) and another breed at least --other (0.6). The flagged photos are
listed with the breed the classifier sees, for a person to look at before anything is removed.

Its blind spot: a block of another breed inside a folder (69 Boston Terriers among 115 "Bulldogs", 84 Italian
Greyhounds among 108 "Greyhounds") is learnt as the folder's breed, so the classifier agrees with the wrong label.
The second pass of more-breeds-removed.tsv found those by looking at every photo of each folder side by side, with
the answer of a model that has none of the 13 breeds (`dedog classify --model .work/folds-default/fold-1.safetensors
--format json -k 3 FOLDER`: it names the Boston Terriers as such and the Italian Greyhounds rather than Whippets).

Input: the features `DedogBench features MODEL LIST OUT` wrote (OUT.f32, OUT.tsv) for Stanford Dogs and
more-breeds-224. Output (stdout): one TSV line per flagged photo: path, folder, own probability, the breed seen,
its probability, and the split.
"""
import argparse, numpy as np, sys
from pathlib import Path
from scipy.optimize import minimize

parser = argparse.ArgumentParser()
parser.add_argument("features", type=Path, help="the OUT of DedogBench features (without .f32/.tsv)")
parser.add_argument("--own", type=float, default=0.05)
parser.add_argument("--other", type=float, default=0.6)
parser.add_argument("--folds", type=int, default=5)
parser.add_argument("--l2", type=float, default=1e-3)
args = parser.parse_args()

index = [line.rstrip("\n").split("\t") for line in open(args.features.with_suffix(".tsv"))]
paths = [p for p, _ in index]
ok = np.array([status == "ok" for _, status in index])
x = np.fromfile(args.features.with_suffix(".f32"), dtype=np.float32).reshape(len(paths), -1)
folder = np.array([Path(p).parent.name for p in paths])
split = np.array(["stanford" if "stanford-dogs-224" in p else Path(p).name.split("_")[0] for p in paths])
coyote = np.array(["coyote" in f for f in folder])
stanford_test = set(line.split("\t")[0] for line in open(Path(paths[0]).parents[1] / "splits/test.txt")) \
    if "stanford-dogs-224" in paths[0] else set()
is_st_test = np.array(["/".join(Path(p).parts[-2:]) in stanford_test for p in paths])

use = ok & ~coyote & ~is_st_test & np.isin(split, ["stanford", "train", "valid", "test"])
classes = sorted(set(folder[use]))
y = np.array([classes.index(f) if f in classes else -1 for f in folder])
mean, std = x[use].mean(0), x[use].std(0) + 1e-6
z = (x - mean) / std
k = len(classes)


def fit(rows):
    xs, ys = z[rows], y[rows]
    d = xs.shape[1]

    def loss(w):
        w = w.reshape(d + 1, k)
        logits = xs @ w[:-1] + w[-1]
        logits -= logits.max(1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(1, keepdims=True)
        n = len(ys)
        value = -np.log(p[np.arange(n), ys] + 1e-12).mean() + args.l2 * (w[:-1] ** 2).sum() / 2
        p[np.arange(n), ys] -= 1
        grad = np.vstack([xs.T @ p / n + args.l2 * w[:-1], p.mean(0)])
        return value, grad.ravel()

    result = minimize(loss, np.zeros((d + 1) * k), jac=True, method="L-BFGS-B", options={"maxiter": 200})
    return result.x.reshape(d + 1, k)


def answer(w, rows):
    logits = z[rows] @ w[:-1] + w[-1]
    logits -= logits.max(1, keepdims=True)
    p = np.exp(logits)
    return p / p.sum(1, keepdims=True)


# Folds: Stanford photos train every fold; more-breeds photos (all their splits) are split into folds, so each is
# answered by a classifier that did not see it. The more-breeds test split is never trained on here.
rng = np.random.default_rng(1)
mb = np.where(use & (split != "stanford"))[0]
fold = np.full(len(paths), -1)
fold[mb] = rng.permutation(len(mb)) % args.folds
probabilities = np.zeros((len(paths), k), dtype=np.float64)
for f in range(args.folds):
    train = np.where(use & (fold != f) & (split != "test"))[0]
    test = np.where(fold == f)[0]
    w = fit(train)
    probabilities[test] = answer(w, test)
    print(f"fold {f}: trained on {len(train)}, answered {len(test)}", file=sys.stderr)

flagged = 0
for i in mb:
    own = probabilities[i, y[i]]
    best = int(np.argmax(probabilities[i]))
    if own < args.own and best != y[i] and probabilities[i, best] >= args.other:
        flagged += 1
        print(f"{paths[i]}\t{folder[i]}\t{own:.3f}\t{classes[best]}\t{probabilities[i, best]:.3f}\t{split[i]}")
print(f"{flagged} of {len(mb)} more-breeds photos flagged", file=sys.stderr)
