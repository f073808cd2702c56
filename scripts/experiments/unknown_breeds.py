"""How well can a model tell "a breed I do not know"? A study on models trained with some breeds held out.

For each fold model (a model file `dedog train` wrote without some breeds) this computes, in numpy, for every photo
what `Model.decide` sees: the combined breed probabilities (each backbone's calibrated softmax, their log-average,
the combined temperature), the ImageNet heads' mass on dogs, and candidate signals of "none of my breeds":
  p1, margin        the top breed's probability and its lead on the second
  cosine            how like the top breed's prototype (the mean direction of its training photos) the photo is
  nearest           the best cosine to any of the top breed's training photos (what a file would need to store)
  spread            the photo's distance from the top breed's mean in units of that breed's own spread per feature
                    (a diagonal Mahalanobis distance)
  agree             whether the backbones' own top breeds agree
  energy            the log-sum-exp of the logits, averaged over backbones
Known photos: the fold model's breeds' validation photos (splits/validation.txt, never trained on). Unknown photos:
the held-out breeds' photos of the train split (never the test splits). It prints each signal's separation (AUC),
and the trade-off of rules: known photos no longer named (that were named right) against unknown photos answered
with a confident breed. Input features: `DedogBench features` of the combined data set with the same backbones.

--views: the features of views of those photos (transformed_views.py --pick 1: OUT/<view>/<class>/<file>), which
the backbones never learnt (issue 70): each view is a known or unknown photo as its original is, its `source` the
view's name (the originals' is "original"). The per-breed statistics (nearest, spread) come from originals only.
"""
import argparse, json, sys
import numpy as np
from pathlib import Path
sys.path.insert(0, str(Path(__file__).parent))
from dedog_model import read_model, log_softmax

parser = argparse.ArgumentParser()
parser.add_argument("--features", type=Path, required=True)
parser.add_argument("--dataset", type=Path, required=True, help="the combined data set (its splits/)")
parser.add_argument("--fold", action="append", required=True,
                    help="MODEL:HELD_OUT_LIST (class folders, one a line); MODEL: alone for the model the rule is for")
parser.add_argument("--out", type=Path, help="write the per-photo signals here (npz)")
parser.add_argument("--views", type=Path, help="DedogBench features of views of the photos (OUT/<view>/<class>/<file>)")
parser.add_argument("--prototypes", type=Path, action="append", default=[],
                    help="DedogBench features (repeatable) whose photos, by class folder, make each breed's prototype "
                         "instead of the model's own: the mean of their unit directions (issue 70: with views)")
args = parser.parse_args()


def read(features):
    paths = [line.split("\t")[0] for line in open(features.with_suffix(".tsv"))]
    return paths, np.fromfile(features.with_suffix(".f32"), dtype=np.float32).reshape(len(paths), -1)


paths, features = read(args.features)
originals = len(paths)
source = ["original"] * originals
if args.views:
    view_paths, view_features = read(args.views)
    paths, features = paths + view_paths, np.concatenate([features, view_features])
    source += [Path(p).parts[-3] for p in view_paths]
source = np.array(source)
relative = ["/".join(Path(p).parts[-2:]) for p in paths]
split_rows = lambda name: {line.split("\t")[0].strip() for line in open(args.dataset / "splits" / name)}
in_train, in_validation = split_rows("train.txt"), split_rows("validation.txt")
train_rows = {i for i, r in enumerate(relative) if r in in_train}
validation_rows = {i for i, r in enumerate(relative) if r in in_validation}
folder = np.array([Path(p).parent.name for p in paths])


def auc(known, unknown):
    """P(a random unknown photo scores lower than a random known one): 1 = perfect, 0.5 = chance."""
    scores = np.concatenate([known, unknown])
    order = scores.argsort()
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(1, len(scores) + 1)
    r_known = ranks[:len(known)].sum()
    return (r_known - len(known) * (len(known) + 1) / 2) / (len(known) * len(unknown))


# Each class folder's summed unit directions per backbone, from --prototypes.
made_prototypes = {}
for source_features in args.prototypes:
    names, rows_ = read(source_features)
    for name, row in zip(names, rows_):
        c = Path(name).parent.name
        x_ = row.reshape(-1, 1280)
        made_prototypes[c] = made_prototypes.get(c, 0) + x_ / np.linalg.norm(x_, axis=1, keepdims=True)

all_signals = []
for spec in args.fold:
    model_path, held_path = spec.split(":")
    # No list: the model itself, whose known photos set the rule's scale and threshold (fit_unknown_breed_rule.py).
    held = {line.strip() for line in open(held_path) if line.strip()} if held_path else set()
    description, tensor = read_model(model_path)
    backbones = description["backbones"]
    labels = [l["key"] for l in backbones[0]["breedHead"]["labels"]]
    k = len(labels)
    width = 1280
    x = features.reshape(len(paths), len(backbones), width)
    known_rows = np.array(sorted(r for r in validation_rows if folder[r] in labels), dtype=int)
    unknown_rows = np.array(sorted(r for r in train_rows if folder[r] in held), dtype=int)
    rows = np.concatenate([known_rows, unknown_rows])
    truth = np.array([labels.index(folder[r]) if folder[r] in labels else -1 for r in rows])
    is_known = np.arange(len(rows)) < len(known_rows)
    # The trained breeds' own training photos (not validation), for the per-breed statistics a file would store.
    fit_rows = np.array(sorted(r for r in train_rows - validation_rows if folder[r] in labels and r < originals))
    fit_label = np.array([labels.index(folder[r]) for r in fit_rows])

    combined = np.zeros((len(rows), k))
    tops, cosines, energies, nearest, spreads = [], [], [], [], []
    dog_mass = np.zeros(len(rows))
    imagenet = 0
    for b, bb in enumerate(backbones):
        prefix = bb["tensorPrefix"]
        w, bias = tensor(bb["breedHead"]["weight"]), tensor(bb["breedHead"]["bias"])
        t = (bb.get("int8") or {}).get("breedTemperature") or bb["breedHead"].get("temperature") or 1
        logits = x[rows, b] @ w.T + bias
        energies.append(np.log(np.exp(logits - logits.max(1, keepdims=True)).sum(1)) + logits.max(1))
        lp = log_softmax(logits / t)
        combined += lp / len(backbones)
        tops.append(lp.argmax(1))
        direction = x[rows, b] / np.linalg.norm(x[rows, b], axis=1, keepdims=True)
        prototypes = tensor(bb["prototypes"]) if bb.get("prototypes") else None
        if prototypes is not None and made_prototypes:
            prototypes = prototypes.copy()
            for c, label in enumerate(labels):
                if label in made_prototypes:
                    prototypes[c] = made_prototypes[label][b] / np.linalg.norm(made_prototypes[label][b])
        cosines.append(direction @ prototypes.T if prototypes is not None else None)
        iw, ib = tensor(bb["imagenetHead"]["weight"]), tensor(bb["imagenetHead"]["bias"])
        it = bb["imagenetHead"].get("temperature") or 1
        ip = np.exp(log_softmax((x[rows, b] @ iw.T + ib) / it))
        dogs = np.array([l["isDog"] for l in bb["imagenetHead"]["labels"]])
        dog_mass += ip[:, dogs].sum(1) / len(backbones)
        imagenet += ip / len(backbones)
        if len(set(fit_label.tolist())) < k:  # the features hold only the rule's photos: no per-breed statistics
            continue
        # nearest training photo and the diagonal spread, per breed, from the fold's training photos
        train_dir = x[fit_rows, b] / np.linalg.norm(x[fit_rows, b], axis=1, keepdims=True)
        near = np.full((len(rows), k), -1.0)
        sims = direction @ train_dir.T
        for c in range(k):
            cols = fit_label == c
            if cols.any():
                near[:, c] = sims[:, cols].max(1)
        nearest.append(near)
        mean = np.stack([x[fit_rows[fit_label == c], b].mean(0) for c in range(k)])
        std = np.stack([x[fit_rows[fit_label == c], b].std(0) + 1e-3 for c in range(k)])
        spreads.append((mean, std))
    temperature = description.get("int8CombinedTemperature") or description.get("combinedTemperature") or 1
    p = np.exp(log_softmax(combined / temperature))
    top = p.argmax(1)
    ordered = np.sort(p, 1)
    s = {
        "p1": ordered[:, -1], "margin": ordered[:, -1] - ordered[:, -2],
        "cosine": np.mean([c[np.arange(len(rows)), top] for c in cosines], 0) if all(c is not None for c in cosines) else None,
        "nearest": np.mean([n[np.arange(len(rows)), top] for n in nearest], 0) if nearest else None,
        "spread": -np.mean([np.sqrt((((x[rows, b] - m[top]) / sd[top]) ** 2).mean(1)) for b, (m, sd) in enumerate(spreads)], 0)
                  if spreads else None,
        "agree": np.mean([t_ == top for t_ in tops], 0),
        "energy": np.mean(energies, 0),
        # Candidates for how new a photo is to the backbones (issue 70): the ImageNet heads' top probability and the
        # features' length, averaged over the backbones.
        "imagenetTop": imagenet.max(1),
        "length": np.mean([np.linalg.norm(x[rows, b], axis=1) for b in range(len(backbones))], 0),
    }
    # As DecisionThresholds.verdict: under the threshold, "no dog" needs a class that is not a dog at 3 % or more,
    # unless the dog share is under half the threshold (seesNothingElse).
    threshold = description["decision"]["noDogBelow"]
    top_other = imagenet[:, ~dogs].max(1)
    noDog = (dog_mass < threshold) & ((dog_mass < threshold * 0.5) | (top_other >= 0.03))
    unsure = (s["p1"] < description["decision"]["unsureBelow"]) | (s["margin"] < description["decision"]["unsureMargin"])
    named = ~noDog & ~unsure
    right = top == truth
    print(f"\n== {Path(model_path).name}: {k} breeds; known (validation) {is_known.sum()}, unknown (held-out breeds) {(~is_known).sum()}")
    print(f"without a rule: known named right {np.mean(named[is_known] & right[is_known]):.3f}"
          + (f"; unknown named confidently (wrong) {np.mean(named[~is_known]):.3f}, "
             f"unsure {np.mean(unsure[~is_known] & ~noDog[~is_known]):.3f}, no dog {np.mean(noDog[~is_known]):.3f}" if held else ""))
    original = source[rows] == "original"
    for name, v in s.items():
        if v is not None and held:
            print(f"  AUC {name:8s} {auc(v[is_known & original], v[~is_known & original]):.3f}"
                  + (f" (views: {auc(v[is_known & ~original], v[~is_known & ~original]):.3f})" if (~original).any() else ""))
    # Also each photo's row in the features and its breed probabilities, for the studies that come after the rule
    # (the kind of dog: kind_of_dog.py; other signals: more_signals.py).
    all_signals.append(dict(model=str(model_path), is_known=is_known, named=named, right=right, noDog=noDog, folder=folder[rows],
                            source=source[rows],
                            unsure=unsure, rows=rows, labels=np.array(labels), probabilities=p.astype(np.float32),
                            **{n: v for n, v in s.items() if v is not None}))

if args.out:
    np.savez(args.out, folds=np.array(all_signals, dtype=object))
