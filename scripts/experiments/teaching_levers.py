#!/usr/bin/env python3
"""Teaching a breed from 3 photos: what makes the taught row reach the breed's photos unlike its three (issue 72,
deliverable 1). A numpy rebuild of `TaughtBreed.row` (as taught_likeness.py) on `scripts/bench-teaching`'s check sets,
with the levers the issue names:

  base      the row as dedog makes it: the taught photos' mean direction, at the trained rows' mean length, its bias
            from their leave-one-out likeness (capped at 0.66, moved `towardsOne` of the way to 1);
  views     the direction from more views of each taught photo (the photo, a closer centre, two corners, the photo
            zoomed out in a grey frame: made by `views`), the likeness still between photos (each photo's views
            averaged), since a photo beside its own crop looks like a breed whose photos are all alike;
  mapped    the direction the trained head would have given a breed with that mean (Qiao et al., "Few-shot image
            recognition by predicting parameters from activations", CVPR 2018): a ridge map M from the trained breeds'
            prototypes to their rows (M p_c ≈ w_c), shrunk towards a multiple of the identity, and the row M μ̂;
            the bias then takes the cosine between M μ̂ and μ̂ into the likeness;
  calibrated the mean moved towards its nearest trained breeds' prototypes (distribution calibration, Yang et al.,
            ICLR 2021, the mean part of it: μ' = (μ̂ + Σ nearest k p_c) / (k + 1), here weighted by `--borrow`).
The score is the top breed only (the verdict's other rules and a taught breed giving way are left out): its other
photos whose top breed the taught breed is, and the other breeds' photos whose top breed it changes.

  teaching_levers.py views SETS OUT              (scripts/.work/venv-bench/bin/python: PIL) views of SETS/teach
  teaching_levers.py measure --model M --sets S1,S2 --features F1,F2 [--view-features V1,V2]
FEATURES: `DedogBench features M LIST OUT` of every photo of a set (find SET -name '*.jpg' | sort); VIEW-FEATURES the
same of `views`' OUT.
"""
import argparse, random, sys
from pathlib import Path
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))


def make_views(sets, out):
    from PIL import Image
    for photo in sorted((sets / "teach").glob("*/*.jpg")):
        image = Image.open(photo).convert("RGB")
        w, h = image.size
        rng = random.Random(str(photo.relative_to(sets)))
        views = [image]
        s = 0.8
        views.append(image.crop((round(w * (1 - s) / 2), round(h * (1 - s) / 2), round(w * (1 + s) / 2), round(h * (1 + s) / 2))))
        for corner in range(2):
            s = rng.uniform(0.7, 0.8)
            x0 = 0 if corner == 0 else w - round(w * s)
            y0 = round(rng.uniform(0, 1) * (h - round(h * s)))
            views.append(image.crop((x0, y0, x0 + round(w * s), y0 + round(h * s))))
        frame = Image.new("RGB", (round(w * 1.25), round(h * 1.25)), (124, 116, 104))
        frame.paste(image, ((frame.width - w) // 2, (frame.height - h) // 2))
        views.append(frame)
        folder = out / photo.parent.name
        folder.mkdir(parents=True, exist_ok=True)
        for v, view in enumerate(views):
            view.save(folder / f"{photo.stem}-{v}.jpg", quality=92)


def measure(a):
    from dedog_model import read_model, log_softmax, read_features, breed_heads
    heads, combined_t = breed_heads(*read_model(a.model))
    unit = lambda v: v / np.linalg.norm(v, axis=-1, keepdims=True)

    maps = []
    for W, b, P, _ in heads:
        d = W.shape[1]
        s = np.mean(np.einsum("ij,ij->i", W, P))
        lam = a.ridge * np.trace(P.T @ P) / d
        Mt = np.linalg.solve(P.T @ P + lam * np.eye(d), P.T @ W + lam * s * np.eye(d))
        maps.append(Mt.T)

    def row(b, photos, view_units, lever, towards):
        W, bias, P, _ = heads[b]
        units = unit(np.array(photos))
        length = np.mean(np.linalg.norm(photos, axis=1))
        loo = [units[i] @ unit(np.mean(np.delete(units, i, 0), 0)) for i in range(len(units))]
        alike = min(np.mean(loo), 0.66)
        mean = unit(np.mean(view_units, 0)) if lever.startswith("views") and view_units is not None else unit(units.mean(0))
        direction, factor = mean, 1.0
        if "calibrated" in lever:
            near = np.argsort(-(P @ mean))[:a.nearest]
            direction = unit(mean + a.borrow * P[near].sum(0) / a.nearest)
        if "mapped" in lever:
            direction = unit(maps[b] @ direction)
            factor = direction @ mean
        rho = alike + towards * (1 - alike)
        k = np.linalg.norm(W, axis=1).mean()
        target = np.sort(np.einsum("ij,ij->i", W, P) * length + bias)[len(bias) // 2]
        return direction * k, target - k * length * rho * factor

    def combined(X, extra):
        lp = 0
        for b, (W, bias, P, t) in enumerate(heads):
            Wb, bb = W, bias
            if extra is not None:
                Wb, bb = np.vstack([W, extra[b][0]]), np.append(bias, extra[b][1])
            lp = lp + log_softmax((X[:, b] @ Wb.T + bb) / t) / len(heads)
        return np.exp(log_softmax(lp / combined_t)).argmax(1)

    sets = a.sets.split(",")
    feats = a.features.split(",")
    vfeats = a.view_features.split(",") if a.view_features else [None] * len(sets)
    results = {}
    for set_dir, f, vf in zip(sets, feats, vfeats):
        paths, X = read_features(Path(f), len(heads))
        X = X.astype(np.float64)
        where = lambda kind, breed=None: [i for i, p in enumerate(paths) if f"/{kind}/" in p and (breed is None or f"/{kind}/{breed}/" in p)]
        others = where("others")
        before = combined(X[others], None)
        views = {}
        if vf:
            vpaths, V = read_features(Path(vf), len(heads))
            for i, p in enumerate(vpaths):
                views.setdefault(Path(p).parent.name, []).append(V[i].astype(np.float64))
        breeds = sorted({Path(paths[i]).parent.name for i in where("teach")})
        for lever in a.levers.split(","):
            for towards in map(float, a.towards.split(",")):
                right = n = same = m = 0
                for breed in breeds:
                    taught, check = where("teach", breed), where("check", breed)
                    extra = []
                    for b in range(len(heads)):
                        vu = None
                        if breed in views:
                            vu = unit(np.array([v[b] for v in views[breed]]))
                        extra.append(row(b, X[taught, b], vu, lever, towards))
                    top = combined(X[check], extra)
                    right += np.sum(top == len(heads[0][1])); n += len(check)
                    same += np.sum(combined(X[others], extra) == before); m += len(others)
                cell = results.setdefault((lever, towards), [0, 0, 0, 0])
                for j, v in enumerate((right, n, same, m)):
                    cell[j] += v
                print(f"{Path(set_dir).name}\t{lever}\ttowards {towards}\ttop breed {right / n:.1%}\tothers unchanged {same / m:.2%}", flush=True)
    print("| lever | towardsOne | the taught breeds' other photos, top breed | other breeds' top breed unchanged |\n|---|---|---|---|")
    for (lever, towards), (right, n, same, m) in results.items():
        print(f"| {lever} | {towards} | {right}/{n} ({right / n:.1%}) | {same}/{m} ({same / m:.2%}) |")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "views":
        make_views(Path(sys.argv[2]), Path(sys.argv[3]))
        sys.exit()
    p = argparse.ArgumentParser()
    p.add_argument("command", choices=["measure"])
    p.add_argument("--model", required=True)
    p.add_argument("--sets", required=True)
    p.add_argument("--features", required=True)
    p.add_argument("--view-features")
    p.add_argument("--levers", default="base,views,mapped,calibrated,views+mapped")
    p.add_argument("--towards", default="0.25")
    p.add_argument("--ridge", type=float, default=1.0)
    p.add_argument("--nearest", type=int, default=2)
    p.add_argument("--borrow", type=float, default=0.5)
    measure(p.parse_args())
