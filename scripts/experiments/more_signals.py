"""Signals of "a breed this model does not know" beyond the rule's four, for issue 62's table: each computed per fold
model from the photos' features (`DedogBench features`, the combined data set), added to unknown_breeds.py's signals
and written to a new npz that fit_unknown_breed_rule.py --signals reads. Fit statistics come from each model's own
training photos (its breeds' train split without the validation part), never from the photos scored.

  knn        the cosine similarity of the photo's unit features to its k-th nearest training photo of any breed (Sun et
             al. 2022), the backbones averaged (k = 50)
  knn_pca    the same on the features projected to the first 128 principal directions of the training photos (what a
             model file could afford to store: 12,000 photos × 128 × 2 backbones in F16 is 6 MB)
  maha       minus the smallest Mahalanobis distance to a breed's mean with one covariance shared by all breeds (Lee et
             al. 2018), on the 256 principal directions of the within-breed scatter, shrunk 10 % towards its mean
             eigenvalue; backbones averaged
  disagree   minus the backbones' breed heads' disagreement: the Jensen-Shannon divergence of their calibrated softmaxes
  imagenet_out  minus the ImageNet heads' mass on dog classes the model has no breed for, as a share of their dog mass
             (zero for a model with every ImageNet dog class among its breeds, as the bundled ones have)
  crop       (with --crops FEATURES) minus the divergence between the whole photo's breed probabilities and the dog's
             crop's (the detector's best box, `DedogBench features --crops`)

Usage: more_signals.py SIGNALS.npz --features FEATURES --dataset COMBINED [--crops CROP_FEATURES] --out MORE.npz
"""
import argparse, sys
import numpy as np
from pathlib import Path
sys.path.insert(0, str(Path(__file__).parent))
from dedog_model import read_model, log_softmax

parser = argparse.ArgumentParser()
parser.add_argument("signals")
parser.add_argument("--features", type=Path, required=True)
parser.add_argument("--dataset", type=Path, required=True)
parser.add_argument("--crops", type=Path)
parser.add_argument("--k", type=int, default=50)
parser.add_argument("--out", required=True)
args = parser.parse_args()

paths = [line.split("\t")[0] for line in open(args.features.with_suffix(".tsv"))]
relative = ["/".join(Path(p).parts[-2:]) for p in paths]
row_of = {r: i for i, r in enumerate(relative)}
folder = np.array([Path(p).parent.name for p in paths])
split_rows = lambda name: {row_of[l.split("\t")[0]] for l in open(args.dataset / "splits" / name) if l.split("\t")[0] in row_of}
train_rows, validation_rows = split_rows("train.txt"), split_rows("validation.txt")
everything = list(np.load(args.signals, allow_pickle=True)["folds"])
crop_of = None
if args.crops:
    crop_paths = [line.split("\t")[0] for line in open(args.crops.with_suffix(".tsv"))]
    crop_ok = [line.rstrip("\n").split("\t")[1] == "ok" for line in open(args.crops.with_suffix(".tsv"))]
    crop_of = {"/".join(Path(p).parts[-2:]): i for i, (p, ok) in enumerate(zip(crop_paths, crop_ok)) if ok}


def unit(x):
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)


def kth_similarity(queries, bank, k):
    out = np.empty(len(queries))
    for start in range(0, len(queries), 512):
        sims = queries[start:start + 512] @ bank.T
        out[start:start + 512] = -np.partition(-sims, k - 1, axis=1)[:, k - 1]
    return out


def js(p, q):
    m = (p + q) / 2
    kl = lambda a, b: (a * (np.log(a + 1e-12) - np.log(b + 1e-12))).sum(1)
    return (kl(p, m) + kl(q, m)) / 2


all_features = np.fromfile(args.features.with_suffix(".f32"), dtype=np.float32)
crop_features = np.fromfile(args.crops.with_suffix(".f32"), dtype=np.float32) if args.crops else None
for f in everything:
    description, tensor = read_model(f["model"])
    backbones = description["backbones"]
    B = len(backbones)
    x = all_features.reshape(len(paths), B, -1)
    labels = [str(l) for l in f["labels"]]
    rows = f["rows"]
    fit_rows = np.array(sorted(r for r in train_rows - validation_rows if folder[r] in labels))
    fit_label = np.array([labels.index(folder[r]) for r in fit_rows])
    knn = np.zeros(len(rows)); knn_pca = np.zeros(len(rows)); maha = np.zeros(len(rows))
    probs, imagenet_out = [], np.zeros(len(rows))
    for b, bb in enumerate(backbones):
        u_fit, u = unit(x[fit_rows, b]), unit(x[rows, b])
        knn += kth_similarity(u, u_fit, args.k) / B
        mean = u_fit.mean(0)
        _, _, vt = np.linalg.svd(u_fit - mean, full_matrices=False)
        proj = vt[:128].T
        knn_pca += kth_similarity(unit((u - mean) @ proj), unit((u_fit - mean) @ proj), args.k) / B
        # Mahalanobis with a shared covariance
        means = np.stack([x[fit_rows[fit_label == c], b].mean(0) for c in range(len(labels))])
        centred = x[fit_rows, b] - means[fit_label]
        _, sv, vt = np.linalg.svd(centred, full_matrices=False)
        v = vt[:256].T
        eig = sv[:256] ** 2 / len(centred)
        eig = 0.9 * eig + 0.1 * eig.mean()
        z, zm = (x[rows, b] @ v) / np.sqrt(eig), (means @ v) / np.sqrt(eig)
        d = (z ** 2).sum(1)[:, None] - 2 * z @ zm.T + (zm ** 2).sum(1)[None]
        maha -= d.min(1) / B
        head = bb["breedHead"]
        t = (bb.get("int8") or {}).get("breedTemperature") or head.get("temperature") or 1
        probs.append(np.exp(log_softmax((x[rows, b] @ tensor(head["weight"]).T + tensor(head["bias"])) / t)))
        ih = bb["imagenetHead"]
        ip = np.exp(log_softmax((x[rows, b] @ tensor(ih["weight"]).T + tensor(ih["bias"])) / (ih.get("temperature") or 1)))
        ilabels = ih["labels"]
        covered = {k for l in head["labels"] for k in ([l["key"]] + (l.get("imagenetKeys") or []))}
        dogs = np.array([l["isDog"] for l in ilabels])
        outside = np.array([l["isDog"] and l["key"] not in covered for l in ilabels])
        imagenet_out -= ip[:, outside].sum(1) / np.maximum(ip[:, dogs].sum(1), 1e-9) / B
    disagree = -np.mean([js(p, probs[0]) for p in probs[1:]], 0) if B > 1 else np.zeros(len(rows))
    f["knn"], f["knn_pca"], f["maha"], f["disagree"], f["imagenet_out"] = knn, knn_pca, maha, disagree, imagenet_out
    if crop_features is not None:
        cf = crop_features.reshape(-1, B, x.shape[2])
        whole = f["probabilities"].astype(np.float64)
        have = np.array([relative[r] in crop_of for r in rows])
        combined = 0
        for b, bb in enumerate(backbones):
            head = bb["breedHead"]
            t = (bb.get("int8") or {}).get("breedTemperature") or head.get("temperature") or 1
            cx = np.stack([cf[crop_of[relative[r]], b] if relative[r] in crop_of else x[r, b] for r in rows])
            combined = combined + log_softmax((cx @ tensor(head["weight"]).T + tensor(head["bias"])) / t) / B
        temperature = description.get("int8CombinedTemperature") or description.get("combinedTemperature") or 1
        crop_p = np.exp(log_softmax(combined / temperature))
        f["crop"] = np.where(have, -js(whole, crop_p), 0.0)
    print(f"{Path(f['model']).name}: {len(rows)} photos, signals added")

np.savez(args.out, folds=np.array(everything, dtype=object))
