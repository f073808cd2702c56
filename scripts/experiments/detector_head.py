"""Tries dog-detector heads on the grids `DedogBench detector-cells` wrote, in PyTorch, to choose what
DedogTrain/DetectorHead.swift trains (its loss and decoding are the same as here).

    python detector_head.py CELLS_DIR [--hidden 128] [--epochs 24] [--decay 1e-4] [--dropout 0] [--lr 1e-3] ...

Reports per epoch the validation loss, box AP at IoU 0.5 (COCO's 101 points) and, at the threshold where at most
2 % of one-dog validation photos are split, the share of photos of several dogs where several are found.
The validation grids are real photos of the train split held out (never the test split).
"""
import argparse
import json
import math
from pathlib import Path

import numpy as np
import torch

WIDTH = 1280


def targets(boxes, rows, columns):
    heat = np.zeros(rows * columns, np.float32)
    centre = np.zeros(rows * columns, bool)
    values = np.zeros((rows * columns, 4), np.float32)
    for cx, cy, w, h in boxes:
        gx, gy = cx * columns, cy * rows
        c, r = min(columns - 1, int(gx)), min(rows - 1, int(gy))
        sx, sy = max(0.35, w * columns / 6), max(0.35, h * rows / 6)
        xs = np.arange(columns) + 0.5 - gx
        ys = np.arange(rows) + 0.5 - gy
        g = np.exp(-(xs[None, :] ** 2) / (2 * sx * sx) - (ys[:, None] ** 2) / (2 * sy * sy)).reshape(-1)
        heat = np.maximum(heat, g)
        i = r * columns + c
        heat[i] = 1
        centre[i] = True
        values[i] = [gx - c - 0.5, gy - r - 0.5, math.log(w), math.log(h)]
    return heat, centre, values


def loss(out, heat, centre, values):
    """CenterNet's focal loss on the centre score and L1 on offset and log size at centres, per dog."""
    z = out[..., 0]
    p = torch.sigmoid(z).clamp(1e-6, 1 - 1e-6)
    positive = heat == 1
    pos = -((1 - p) ** 2) * torch.log(p)
    neg = -((1 - heat) ** 4) * p ** 2 * torch.log(1 - p)
    focal = torch.where(positive, pos, neg).sum()
    l1 = (out[..., 1:] - values).abs().sum(-1)[centre].sum()
    return focal + l1, positive.sum()


def decode(out, rows, columns, minimum=0.02, overlap=0.4, inside=0.7):
    score = 1 / (1 + np.exp(-out[:, 0]))
    grid = score.reshape(rows, columns)
    found = []
    for r in range(rows):
        for c in range(columns):
            s = grid[r, c]
            if s < minimum:
                continue
            window = grid[max(0, r - 1):r + 2, max(0, c - 1):c + 2]
            if s < window.max() or (s == window.max() and np.argmax(window.reshape(-1) == s) != (min(r, 1) * window.shape[1] + min(c, 1))):
                continue
            o = out[r * columns + c]
            cx, cy = (c + 0.5 + o[1]) / columns, (r + 0.5 + o[2]) / rows
            w, h = math.exp(min(o[3], 2)), math.exp(min(o[4], 2))
            found.append((cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2, s))
    found.sort(key=lambda b: -b[4])
    kept = []
    for b in found:
        if any(iou(b, k) > overlap or share_inside(b, k) > inside for k in kept):
            continue
        kept.append(b)
    return kept


def inter(a, b):
    w, h = min(a[2], b[2]) - max(a[0], b[0]), min(a[3], b[3]) - max(a[1], b[1])
    return w * h if w > 0 and h > 0 else 0.0


def iou(a, b):
    i = inter(a, b)
    return i / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - i) if i else 0.0


def share_inside(a, b):
    area = (a[2] - a[0]) * (a[3] - a[1])
    return inter(a, b) / area if area > 0 else 0.0


def average_precision(found, truths, overlap=0.5):
    total = sum(len(t) for t in truths)
    ranked = []
    for dets, truth in zip(found, truths):
        used = [False] * len(truth)
        for d in dets:
            best, best_o = -1, overlap
            for k, t in enumerate(truth):
                if not used[k]:
                    o = iou(d, t)
                    if o >= best_o:
                        best, best_o = k, o
            if best >= 0:
                used[best] = True
            ranked.append((d[4], best >= 0))
    ranked.sort(key=lambda x: -x[0])
    hits = np.cumsum([h for _, h in ranked])
    precision = hits / np.arange(1, len(ranked) + 1)
    recall = hits / total
    precision = np.maximum.accumulate(precision[::-1])[::-1]
    return float(np.mean([precision[np.searchsorted(recall, level, side="left")] if level <= recall[-1] else 0
                          for level in np.linspace(0, 1, 101)]))


def main():
    a = argparse.ArgumentParser()
    a.add_argument("cells", type=Path)
    a.add_argument("--hidden", type=int, default=128)
    a.add_argument("--epochs", type=int, default=24)
    a.add_argument("--lr", type=float, default=1e-3)
    a.add_argument("--decay", type=float, default=1e-4)
    a.add_argument("--dropout", type=float, default=0.0)
    a.add_argument("--batch", type=int, default=32)
    a.add_argument("--context", action="store_true", help="add each cell's 3×3 neighbourhood mean to its features")
    a.add_argument("--save", type=Path, help="write the last epoch's validation outputs here (.npy)")
    args = a.parse_args()
    torch.manual_seed(1)
    meta = json.loads((args.cells / "grids.json").read_text())
    rows, columns = meta["rows"], meta["columns"]
    cells = np.fromfile(args.cells / "cells.u8", np.uint8).reshape(-1, rows * columns, WIDTH)
    validation = np.array(meta["validation"])
    t = [targets(b, rows, columns) for b in meta["boxes"]]
    heat = torch.tensor(np.stack([x[0] for x in t]))
    centre = torch.tensor(np.stack([x[1] for x in t]))
    values = torch.tensor(np.stack([x[2] for x in t]))
    train = np.where(~validation)[0]
    checked = np.where(validation)[0]
    inputs = WIDTH * (2 if args.context else 1)
    model = torch.nn.Sequential(torch.nn.Dropout(args.dropout), torch.nn.Linear(inputs, args.hidden), torch.nn.ReLU(),
                                torch.nn.Linear(args.hidden, 5))
    with torch.no_grad():
        model[3].weight.normal_(0, 0.01)
        model[3].bias.copy_(torch.tensor([-4.6, 0, 0, math.log(0.5), math.log(0.5)]))
    optimiser = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.decay)
    steps = args.epochs * math.ceil(len(train) / args.batch)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda s: 0.5 * (1 + math.cos(math.pi * s / steps)))
    step = 0.0235294  # 6/255

    def features(index):
        x = torch.tensor(cells[index].astype(np.float32) * step)
        if args.context:
            grid = x.reshape(len(index), rows, columns, WIDTH).permute(0, 3, 1, 2)
            mean = torch.nn.functional.avg_pool2d(grid, 3, 1, 1, count_include_pad=False)
            x = torch.cat([x, mean.permute(0, 2, 3, 1).reshape(len(index), rows * columns, WIDTH)], -1)
        return x

    truths = [[(cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2) for cx, cy, w, h in meta["boxes"][i]] for i in checked]
    for epoch in range(1, args.epochs + 1):
        model.train()
        order = np.random.default_rng(epoch).permutation(train)
        for b in range(0, len(order), args.batch):
            index = np.sort(order[b:b + args.batch])
            out = model(features(index))
            total, dogs = loss(out, heat[index], centre[index], values[index])
            optimiser.zero_grad()
            (total / max(1, int(dogs))).backward()
            optimiser.step()
            schedule.step()
        model.eval()
        with torch.no_grad():
            outs, vloss, vdogs = [], 0.0, 0
            for b in range(0, len(checked), 256):
                index = checked[b:b + 256]
                out = model(features(index))
                total, dogs = loss(out, heat[index], centre[index], values[index])
                vloss += float(total)
                vdogs += int(dogs)
                outs.append(out.numpy())
            outs = np.concatenate(outs)
        found = [decode(o, rows, columns) for o in outs]
        ap = average_precision(found, truths)
        single = [i for i, tr in enumerate(truths) if len(tr) == 1]
        several = [i for i, tr in enumerate(truths) if len(tr) >= 2]
        threshold = next((s / 100 for s in range(5, 91)
                          if np.mean([sum(d[4] >= s / 100 for d in found[i]) >= 2 for i in single]) <= 0.02), 0.9)
        seen = np.mean([sum(d[4] >= threshold for d in found[i]) >= 2 for i in several])
        if args.save:
            np.save(args.save, outs)
        print(f"epoch {epoch:2d}  val loss {vloss / max(1, vdogs):.4f}  AP50 {ap:.4f}  threshold {threshold:.2f}  "
              f"several found {seen:.3f}", flush=True)


if __name__ == "__main__":
    main()
