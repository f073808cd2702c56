#!/usr/bin/env python3
"""Trains the dog detector of one backbone (issue 60): a two-level feature-pyramid neck and a head on the backbone's
stride-16 and stride-32 maps (frozen; computed once by `DedogBench pyramid-features` on the views
scripts/experiments/detector_views.py makes), as `DedogNN.FeaturePyramidHead` runs it.

Per cell of the fine grid the head gives a centre score (CenterNet: a Gaussian around each dog's centre cell,
focal loss) and the distances from the cell's middle to the box's four sides, as logarithms of cells, learnt at
every cell within 1.5 cells of a dog's centre and inside its box, weighted by that Gaussian, with a GIoU loss; a
cell claimed by two dogs belongs to the smaller box (FCOS).

The epoch (the several-dog figure averaged over it and its neighbours), the suppression overlap and containment
and the thresholds are chosen on the validation views (the held-out photos as
they are and mirrored): the score threshold that sees the most photos of several dogs as several while splitting
at most --split-limit of the one-dog photos. Writes OUT.safetensors (the detector's tensors and its description,
as `dedog` reads them) and OUT.json (the validation figures).

  train_dog_detector.py --train T --validation V --backbone efficientnet-lite1 --out OUT
  (T and V: the base names detector_views.py and pyramid-features wrote: T.json, T-features.fine.f16, ...)
"""
import argparse, json, math, os, struct, sys, time
from types import SimpleNamespace
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_detector import iou, match, average_precision_numpy  # the benchmark's own scoring, on crop units here


class Neck(nn.Module):
    def __init__(self, fine, coarse, channels, blocks):
        super().__init__()
        self.coarse = nn.Conv2d(coarse, channels, 1)
        self.fine = nn.Conv2d(fine, channels, 1)
        self.depthwise = nn.ModuleList(nn.Conv2d(channels, channels, 3, padding=1, groups=channels) for _ in range(blocks))
        self.pointwise = nn.ModuleList(nn.Conv2d(channels, channels, 1) for _ in range(blocks))
        self.hidden = nn.Conv2d(channels, channels, 1)
        self.output = nn.Conv2d(channels, 5, 1)
        nn.init.constant_(self.output.bias[:1], -4.0)  # CenterNet's prior: few cells hold a centre
        nn.init.constant_(self.output.bias[1:], 0.0)

    def forward(self, fine, coarse):
        h, w = fine.shape[2:]
        up = F.interpolate(self.coarse(coarse), scale_factor=2, mode="nearest")[:, :, :h, :w]
        p = self.fine(fine) + up
        for d, q in zip(self.depthwise, self.pointwise):
            p = p + q(torch.clamp(d(p), 0, 6))
        return self.output(torch.clamp(self.hidden(p), 0, 6))


def load(base, shapes=None):
    meta = json.load(open(base + ".json"))
    shape = json.load(open(base + "-features.json"))
    n = shape["count"]
    fine = np.fromfile(base + "-features.fine.f16", dtype=np.float16).reshape(n, *shape["fine"])
    coarse = np.fromfile(base + "-features.coarse.f16", dtype=np.float16).reshape(n, *shape["coarse"])
    boxes = [np.array(v["boxes"], dtype=np.float32).reshape(-1, 4) for v in meta["views"]]
    return torch.from_numpy(fine).permute(0, 3, 1, 2), torch.from_numpy(coarse).permute(0, 3, 1, 2), boxes, meta, shape


def gaussian_radius(h, w, min_overlap=0.7):
    """CenterNet's radius (in cells) for a box of h x w cells."""
    a1, b1, c1 = 1, h + w, w * h * (1 - min_overlap) / (1 + min_overlap)
    r1 = (b1 + math.sqrt(b1 ** 2 - 4 * a1 * c1)) / 2
    a2, b2, c2 = 4, 2 * (h + w), (1 - min_overlap) * w * h
    r2 = (b2 + math.sqrt(b2 ** 2 - 4 * a2 * c2)) / 2
    a3, b3, c3 = 4 * min_overlap, -2 * min_overlap * (h + w), (min_overlap - 1) * w * h
    r3 = (b3 + math.sqrt(b3 ** 2 - 4 * a3 * c3)) / 2
    return max(0.0, min(r1, r2, r3))


def targets(boxes, rows, cols, reach):
    """Heatmap [rows, cols], regression targets [4, rows, cols] (distances in cells) and their weights [rows, cols]."""
    heat = np.zeros((rows, cols), np.float32)
    reg = np.zeros((4, rows, cols), np.float32)
    weight = np.zeros((rows, cols), np.float32)
    owner_area = np.full((rows, cols), np.inf, np.float32)
    ys, xs = np.mgrid[0:rows, 0:cols].astype(np.float32)
    mx, my = xs + 0.5, ys + 0.5  # cell middles, in cells
    for x0, y0, x1, y1 in boxes:
        bx0, by0, bx1, by1 = x0 * cols, y0 * rows, x1 * cols, y1 * rows
        bw, bh = bx1 - bx0, by1 - by0
        if bw <= 0 or bh <= 0:
            continue
        cx, cy = (bx0 + bx1) / 2, (by0 + by1) / 2
        ix, iy = min(cols - 1, int(cx)), min(rows - 1, int(cy))
        sigma = (2 * max(0, int(gaussian_radius(bh, bw))) + 1) / 6
        g = np.exp(-((xs - ix) ** 2 + (ys - iy) ** 2) / (2 * sigma ** 2))
        heat = np.maximum(heat, g)
        near = ((mx - cx) ** 2 + (my - cy) ** 2 <= reach ** 2) & (mx > bx0) & (mx < bx1) & (my > by0) & (my < by1)
        near[iy, ix] = True  # the centre cell always learns its box
        area = bw * bh
        claim = near & (area < owner_area)
        owner_area[claim] = area
        gw = np.exp(-((mx - cx) ** 2 + (my - cy) ** 2) / (2 * max(sigma, 0.75) ** 2))
        weight[claim] = gw[claim]
        reg[0][claim] = (mx - bx0)[claim]
        reg[1][claim] = (my - by0)[claim]
        reg[2][claim] = (bx1 - mx)[claim]
        reg[3][claim] = (by1 - my)[claim]
    return heat, reg, weight


def focal(logits, heat):
    p = torch.sigmoid(logits).clamp(1e-4, 1 - 1e-4)
    pos = heat.eq(1).float()
    neg = 1 - pos
    pos_loss = torch.log(p) * (1 - p) ** 2 * pos
    neg_loss = torch.log(1 - p) * p ** 2 * (1 - heat) ** 4 * neg
    n = pos.sum().clamp(min=1)
    return -(pos_loss.sum() + neg_loss.sum()) / n


def giou_loss(pred, target, weight):
    """pred, target: [n, 4] distances (l, t, r, b) from the same point."""
    pl, pt, pr, pb = pred.unbind(1)
    tl, tt, tr, tb = target.unbind(1)
    pa, ta = (pl + pr) * (pt + pb), (tl + tr) * (tt + tb)
    iw = torch.min(pl, tl) + torch.min(pr, tr)
    ih = torch.min(pt, tt) + torch.min(pb, tb)
    inter = iw.clamp(min=0) * ih.clamp(min=0)
    union = pa + ta - inter
    iou = inter / union.clamp(min=1e-6)
    cw = torch.max(pl, tl) + torch.max(pr, tr)
    ch = torch.max(pt, tt) + torch.max(pb, tb)
    enclose = (cw * ch).clamp(min=1e-6)
    giou = iou - (enclose - union) / enclose
    return ((1 - giou) * weight).sum() / weight.sum().clamp(min=1e-6)


def decode(out, min_score, top=30):
    """Boxes (crop units) and scores of one view's outputs [5, rows, cols]: the 3x3 peaks, best first."""
    rows, cols = out.shape[1:]
    score = torch.sigmoid(out[0])
    peak = F.max_pool2d(score[None, None], 3, 1, 1)[0, 0]
    keep = (score == peak) & (score >= min_score)
    idx = torch.nonzero(keep)
    if len(idx) == 0:
        return np.zeros((0, 4)), np.zeros(0)
    s = score[idx[:, 0], idx[:, 1]]
    order = torch.argsort(s, descending=True)[:top]
    idx, s = idx[order], s[order]
    d = torch.exp(out[1:, idx[:, 0], idx[:, 1]].clamp(max=4))
    mx, my = idx[:, 1].float() + 0.5, idx[:, 0].float() + 0.5
    b = torch.stack([(mx - d[0]) / cols, (my - d[1]) / rows, (mx + d[2]) / cols, (my + d[3]) / rows], 1)
    return b.numpy().astype(np.float64), s.numpy().astype(np.float64)


def suppress(boxes, scores, overlap, inside):
    keep = []
    for i in range(len(boxes)):
        ok = True
        for j in keep:
            o = iou(boxes[i:i + 1], boxes[j:j + 1])[0, 0]
            a = max(1e-9, (boxes[i, 2] - boxes[i, 0]) * (boxes[i, 3] - boxes[i, 1]))
            inter = max(0, min(boxes[i, 2], boxes[j, 2]) - max(boxes[i, 0], boxes[j, 0])) * \
                max(0, min(boxes[i, 3], boxes[j, 3]) - max(boxes[i, 1], boxes[j, 1]))
            if o > overlap or inter / a > inside:
                ok = False
                break
        if ok:
            keep.append(i)
    return boxes[keep], scores[keep]


def average_precision(found, truths):
    """AP at each IoU of 0.5:0.95, as scripts/bench_detector.py computes it (boxes ranked by score)."""
    return average_precision_numpy([SimpleNamespace(boxes=b, scores=s, truth=t) for (b, s), t in zip(found, truths)], 100)


def outputs_of(model, fine, coarse, batch=256):
    model.eval()
    outs = []
    with torch.no_grad():
        for i in range(0, len(fine), batch):
            outs.append(model(fine[i:i + batch].float(), coarse[i:i + batch].float()))
    return torch.cat(outs)


def operating(found, truths, threshold, apart=None):
    """The reported boxes' figures at a score threshold (and, optionally, a lower one for boxes apart)."""
    several = [i for i, t in enumerate(truths) if len(t) >= 2]
    one = [i for i, t in enumerate(truths) if len(t) == 1]
    reported = []
    for b, s in found:
        keep = []
        for i in range(len(b)):
            if s[i] >= threshold or (apart is not None and s[i] >= apart and all(is_apart(b[i], b[j]) for j in keep)):
                keep.append(i)
        reported.append(b[keep])
    matched = sum(int(match(r, t, np.array([0.5]))[0].sum()) for r, t in zip(reported, truths))
    return {"severalFound": np.mean([len(reported[i]) >= 2 for i in several]),
            "split": np.mean([len(reported[i]) >= 2 for i in one]),
            "dogsFound": matched / max(1, sum(len(t) for t in truths))}


def is_apart(a, b):
    o = iou(a[None], b[None])[0, 0]
    inter = max(0, min(a[2], b[2]) - max(a[0], b[0])) * max(0, min(a[3], b[3]) - max(a[1], b[1]))
    aa = max(1e-9, (a[2] - a[0]) * (a[3] - a[1]))
    ab = max(1e-9, (b[2] - b[0]) * (b[3] - b[1]))
    return o <= 0.2 and inter / aa <= 0.5 and inter / ab <= 0.5


def validation_outputs(model, fine, coarse, truths, mirror):
    """The validation views' outputs and truths; with `mirror` (views in pairs: a photo, then its mirror image), each
    photo's outputs averaged with its mirror image's flipped back, as DogDetector does for a backbone that averages
    the mirror image."""
    out = outputs_of(model, fine, coarse)
    if not mirror:
        return out, truths
    own, other = out[0::2], torch.flip(out[1::2], dims=[3])
    other = other[:, [0, 3, 2, 1, 4]]  # the mirror's left is the photo's right
    return (own + other) / 2, truths[0::2]


def evaluate(model, fine, coarse, truths, overlap, inside, mirror):
    out, truths = validation_outputs(model, fine, coarse, truths, mirror)
    found = [suppress(*decode(o, 0.02), overlap, inside) for o in out]
    ap = average_precision(found, truths)
    return ap, found, truths


def choose_threshold(found, truths, split_limit):
    best = None
    for t in np.arange(0.10, 0.95, 0.01):
        r = operating(found, truths, t)
        if r["split"] <= split_limit and (best is None or r["severalFound"] > best[1]["severalFound"] + 1e-9):
            best = (float(t), r)
    return best


def write_safetensors(path, tensors, metadata):
    header, offset, blobs = {"__metadata__": metadata}, 0, []
    for name, array in tensors:
        data = np.ascontiguousarray(array, dtype=np.float32).tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def export(model, prefix):
    """The tensors as FeaturePyramidHead reads them: [out x in] for 1x1 layers, [channels x 3 x 3] depthwise."""
    t = []
    def add(name, conv):
        w = conv.weight.detach().numpy()
        t.append((prefix + name + ".weight", w.reshape(w.shape[0], -1)))
        t.append((prefix + name + ".bias", conv.bias.detach().numpy()))
    add("coarse", model.coarse)
    add("fine", model.fine)
    for i, (d, q) in enumerate(zip(model.depthwise, model.pointwise)):
        add(f"block{i}.depthwise", d)
        add(f"block{i}.pointwise", q)
    add("hidden", model.hidden)
    add("output", model.output)
    return t


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--train", required=True)
    ap.add_argument("--validation", required=True)
    ap.add_argument("--backbone", required=True, help="its architecture, e.g. efficientnet-lite1")
    ap.add_argument("--channels", type=int, default=64)
    ap.add_argument("--blocks", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--reach", type=float, default=1.5)
    ap.add_argument("--box-weight", type=float, default=2.0)
    ap.add_argument("--split-limit", type=float, default=0.02)
    ap.add_argument("--mirror", action="store_true",
                    help="the model averages each photo with its mirror image: so does the detector (validation views "
                         "in pairs, a photo then its mirror image)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    np.random.seed(a.seed)
    fine, coarse, boxes, _, shape = load(a.train)
    vfine, vcoarse, vboxes, vmeta, _ = load(a.validation)
    rows, cols = fine.shape[2:]
    print(f"{len(boxes)} training views, {len(vboxes)} validation views; grid {rows}x{cols}", file=sys.stderr)
    t0 = time.time()
    tg = [targets(b, rows, cols, a.reach) for b in boxes]
    heat = torch.from_numpy(np.stack([t[0] for t in tg]))
    reg = torch.from_numpy(np.stack([t[1] for t in tg]))
    weight = torch.from_numpy(np.stack([t[2] for t in tg]))
    print(f"targets in {time.time() - t0:.0f} s", file=sys.stderr)
    model = Neck(fine.shape[1], coarse.shape[1], a.channels, a.blocks)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=1e-4)
    steps = a.epochs * ((len(boxes) + a.batch - 1) // a.batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=a.lr, total_steps=steps, pct_start=0.1)
    vtruth = [b.astype(np.float64) for b in vboxes]
    history, best, states = [], None, []
    for epoch in range(a.epochs):
        model.train()
        perm = torch.randperm(len(boxes))
        total = [0.0, 0.0]
        for i in range(0, len(perm), a.batch):
            idx = perm[i:i + a.batch]
            out = model(fine[idx].float(), coarse[idx].float())
            lh = focal(out[:, 0], heat[idx])
            w = weight[idx]
            m = w > 0
            pred = torch.exp(out[:, 1:].clamp(max=4)).permute(0, 2, 3, 1)[m]
            target = reg[idx].permute(0, 2, 3, 1)[m]
            lb = giou_loss(pred, target, w[m]) if m.any() else out.sum() * 0
            loss = lh + a.box_weight * lb
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total[0] += lh.item() * len(idx)
            total[1] += lb.item() * len(idx)
        apv, found, chosen_truth = evaluate(model, vfine, vcoarse, vtruth, 0.5, 0.8, a.mirror)
        chosen = choose_threshold(found, chosen_truth, a.split_limit)
        row = {"epoch": epoch + 1, "heat": total[0] / len(boxes), "box": total[1] / len(boxes), "ap50": apv[0],
               "ap": apv.mean(), "threshold": chosen[0] if chosen else None,
               **({k: v for k, v in chosen[1].items()} if chosen else {})}
        history.append(row)
        print(json.dumps({k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()}), file=sys.stderr)
        # The several-dog figure of three epochs around (58 photos, mirrored: one photo moves it 0.9 points), so that
        # the choice follows the trend, not one photo's luck.
        states.append({k: v.clone() for k, v in model.state_dict().items()})
        if len(history) >= 2:
            centre = len(history) - 2 if len(history) >= 3 else 0
            around = [h.get("severalFound", 0) for h in history[max(0, centre - 1):centre + 2]]
            key = (sum(around) / len(around), history[centre]["ap"])
            if best is None or key > best[0]:
                best = (key, states[centre], centre + 1)
    last = [h.get("severalFound", 0) for h in history[-2:]]
    if best is None or (sum(last) / len(last), history[-1]["ap"]) > best[0]:
        best = ((sum(last) / len(last), history[-1]["ap"]), states[-1], len(history))
    model.load_state_dict(best[1])
    # Suppression chosen on validation: the overlap and containment limits, then the thresholds.
    grid = []
    out, vtruth = validation_outputs(model, vfine, vcoarse, vtruth, a.mirror)
    raw = [decode(o, 0.02) for o in out]
    for overlap in (0.3, 0.4, 0.5, 0.6, 0.7):
        for inside in (0.6, 0.7, 0.8, 0.9, 1.0):
            found = [suppress(b, s, overlap, inside) for b, s in raw]
            apv = average_precision(found, vtruth)
            chosen = choose_threshold(found, vtruth, a.split_limit)
            grid.append({"overlap": overlap, "inside": inside, "ap50": apv[0], "ap": apv.mean(),
                         "threshold": chosen[0] if chosen else None, **(chosen[1] if chosen else {})})
    for g in grid:
        print(json.dumps({k: round(v, 4) if isinstance(v, float) else v for k, v in g.items()}), file=sys.stderr)
    pick = max(grid, key=lambda g: (round(g.get("severalFound", 0), 4), round(g["ap"], 4)))
    found = [suppress(b, s, pick["overlap"], pick["inside"]) for b, s in raw]
    # The lower threshold for boxes apart from every better one: kept only where validation shows it helps.
    apart_rows = []
    for apart in np.arange(0.10, pick["threshold"], 0.02):
        r = operating(found, vtruth, pick["threshold"], float(apart))
        if r["split"] <= a.split_limit:
            apart_rows.append((float(apart), r))
    apart = pick["threshold"]
    best_apart = max(apart_rows, key=lambda x: x[1]["severalFound"], default=None)
    if best_apart and best_apart[1]["severalFound"] > pick["severalFound"] + 1e-9:
        apart = best_apart[0]
    final = operating(found, vtruth, pick["threshold"], apart)
    description = {"kind": "pyramid", "backbone": 0, "architecture": a.backbone, "channels": a.channels, "blocks": a.blocks,
                   "fineBlock": json.load(open(a.train + "-features.json"))["fineBlock"],
                   "coarseBlock": json.load(open(a.train + "-features.json"))["coarseBlock"],
                   "tensorPrefix": "detector.", "threshold": round(pick["threshold"], 2), "apartThreshold": round(apart, 2),
                   "overlap": pick["overlap"], "inside": pick["inside"]}
    write_safetensors(a.out + ".safetensors", export(model, "detector."), {"dedog.detector": json.dumps(description)})
    report = {"description": description, "epoch": best[2], "history": history, "suppression": grid,
              "validation": {"ap50": pick["ap50"], "ap": pick["ap"], **final,
                             "severalPhotos": sum(len(t) >= 2 for t in vtruth), "onePhotos": sum(len(t) == 1 for t in vtruth)}}
    json.dump(report, open(a.out + ".json", "w"), indent=1, default=float)
    print(json.dumps(report["validation"], default=float), file=sys.stderr)
    print(json.dumps(description), file=sys.stderr)


if __name__ == "__main__":
    main()
