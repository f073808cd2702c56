#!/usr/bin/env python3
"""The views the dog detector learns from (issue 60), as the network sees them: square crops laid out as classify
lays out a photo (`pad`: the longer side resized to RESIZE, centred on a mean-grey square, the centre CROP kept),
with each dog's box in the crop (0..1 of its side).

From the Stanford train split restored to its proportions (the photos not held out), each photo gives:
  - the photo as it is, mirrored at random;
  - the photo at another scale: a part of it holding at least one dog, 55-100 % of each side (zoomed in), or the
    photo at 45-90 % of its size on a flat colour with a little noise (zoomed out);
  - with probability --pairs, a photo of two dogs: a second training photo's dog (its box and a margin) pasted
    beside the first photo's dog, at the offset of a real pair of Stanford's train split (the centres' distance in
    box widths and heights, drawn from the 757 train photos of several dogs: from touching to far apart), its edges
    blended over a few pixels, its height 60-140 % of the first dog's;
  - with probability --mosaics, two or three photos side by side;
  - with probability --close-ups, a close view of the dog (issue 70: owners photograph their dogs close, the dog
    filling or leaving the frame): its box with a margin of -15 % to +5 % of its size (the dog fills the frame or
    overflows it), the box with one side cut by 25-50 % (half a dog), or a square of 45-70 % of the box's shorter
    side in its upper part (a head, as most of Stanford's dogs hold theirs); the dog's box is what of it shows;
  - a photo of several dogs, --several-again more views at other scales.
pets-real's cats, as they are and mirrored, are views without a dog. The held-out photos (validation) are given
as they are and mirrored, nothing made up.

Writes OUT.u8 (views one after another, CROP x CROP x 3 bytes) and OUT.json (per view its boxes and its source).
"""
import argparse, json, math, os, random, sys
import numpy as np
from PIL import Image


def read_boxes(path):
    rows = {}
    with open(path) as f:
        next(f)
        for line in f:
            p = line.rstrip("\n").split("\t")
            w, h = float(p[2]), float(p[3])
            boxes = [tuple(float(v) for v in b.split(",")) for b in p[5].split(";")] if len(p) > 5 and p[5] else []
            rows[p[0]] = (p[1], w, h, boxes)
    return rows


def layout(img, boxes, resize, crop, fill=(127, 127, 127)):
    """classify's `pad`: the photo's longer side to `resize`, centred on a square of that side, the centre crop."""
    w, h = img.size
    if w >= h:
        pw, ph = resize, max(1, min(resize, int(resize * h / w)))
    else:
        pw, ph = max(1, min(resize, int(resize * w / h))), resize
    ox, oy = (resize - pw) // 2, (resize - ph) // 2
    left = top = int(round((resize - crop) / 2))
    canvas = Image.new("RGB", (resize, resize), fill)
    canvas.paste(img.resize((pw, ph), Image.BILINEAR), (ox, oy))
    out = canvas.crop((left, top, left + crop, top + crop))
    sx, sy = pw / w, ph / h
    placed = []
    for x0, y0, x1, y1 in boxes:
        b = [(x0 * sx + ox - left) / crop, (y0 * sy + oy - top) / crop, (x1 * sx + ox - left) / crop, (y1 * sy + oy - top) / crop]
        b = [min(1.0, max(0.0, v)) for v in b]
        if (b[2] - b[0]) * (b[3] - b[1]) > 1e-4:
            placed.append(b)
    return out, placed


def mirrored(img, boxes):
    w = img.size[0]
    return img.transpose(Image.FLIP_LEFT_RIGHT), [(w - x1, y0, w - x0, y1) for x0, y0, x1, y1 in boxes]


def load(root, name, size_w, size_h, boxes):
    img = Image.open(os.path.join(root, name)).convert("RGB")
    sx, sy = img.size[0] / size_w, img.size[1] / size_h
    return img, [(x0 * sx, y0 * sy, x1 * sx, y1 * sy) for x0, y0, x1, y1 in boxes]


def zoomed(rng, img, boxes):
    w, h = img.size
    if rng.random() < 0.5:  # in: a part holding at least one dog's centre
        for _ in range(10):
            cw, ch = int(w * rng.uniform(0.55, 1.0)), int(h * rng.uniform(0.55, 1.0))
            x, y = rng.randint(0, w - cw), rng.randint(0, h - ch)
            kept = []
            for x0, y0, x1, y1 in boxes:
                c = (max(x0, x), max(y0, y), min(x1, x + cw), min(y1, y + ch))
                if c[2] > c[0] and c[3] > c[1] and (c[2] - c[0]) * (c[3] - c[1]) >= 0.5 * (x1 - x0) * (y1 - y0):
                    kept.append((c[0] - x, c[1] - y, c[2] - x, c[3] - y))
                elif c[2] > c[0] and c[3] > c[1]:
                    kept = None  # a dog cut to less than half: try another part
                    break
            if kept:
                return img.crop((x, y, x + cw, y + ch)), kept
        return img, boxes
    s = rng.uniform(0.45, 0.9)  # out: smaller, on a flat colour
    pw, ph = max(1, int(w * s)), max(1, int(h * s))
    colour = tuple(rng.randint(30, 225) for _ in range(3))
    canvas = np.array(Image.new("RGB", (w, h), colour), dtype=np.int16)
    canvas += np.random.default_rng(rng.randint(0, 1 << 30)).integers(-12, 13, canvas.shape, dtype=np.int16)
    canvas = Image.fromarray(np.clip(canvas, 0, 255).astype(np.uint8))
    x, y = rng.randint(0, w - pw), rng.randint(0, h - ph)
    canvas.paste(img.resize((pw, ph), Image.BILINEAR), (x, y))
    return canvas, [(x + x0 * s, y + y0 * s, x + x1 * s, y + y1 * s) for x0, y0, x1, y1 in boxes]


def close_up(rng, img, boxes):
    """A close view of one of the dogs (see the module's description); nil where the box is too small to look at."""
    w, h = img.size
    x0, y0, x1, y1 = boxes[rng.randrange(len(boxes))]
    bw, bh = x1 - x0, y1 - y0
    if min(bw, bh) < 48:
        return None
    kind = rng.random()
    if kind < 0.4:  # the dog fills or overflows the frame
        m = rng.uniform(-0.15, 0.05)
        c = [x0 - m * bw, y0 - m * bh, x1 + m * bw, y1 + m * bh]
    elif kind < 0.7:  # half a dog: one side cut
        c = [x0, y0, x1, y1]
        cut = rng.uniform(0.25, 0.5)
        side = rng.randrange(4)
        if side == 0: c[0] += cut * bw
        elif side == 1: c[2] -= cut * bw
        elif side == 2: c[1] += cut * bh
        else: c[3] -= cut * bh
    else:  # a head: a square in the box's upper part
        side = rng.uniform(0.45, 0.7) * min(bw, bh)
        cx = rng.uniform(x0 + side / 2, x1 - side / 2)
        cy = rng.uniform(y0 + side / 2, y0 + max(side / 2, 0.45 * bh))
        c = [cx - side / 2, cy - side / 2, cx + side / 2, cy + side / 2]
    c = [max(0, c[0]), max(0, c[1]), min(w, c[2]), min(h, c[3])]
    if c[2] - c[0] < 32 or c[3] - c[1] < 32:
        return None
    shown = []
    for d in boxes:  # every dog, as much of it as the view shows
        v = (max(d[0], c[0]) - c[0], max(d[1], c[1]) - c[1], min(d[2], c[2]) - c[0], min(d[3], c[3]) - c[1])
        if v[2] - v[0] > 0.1 * (d[2] - d[0]) and v[3] - v[1] > 0.1 * (d[3] - d[1]):
            shown.append(v)
    return img.crop(tuple(int(round(v)) for v in c)), shown


def pair_offsets(rows, names):
    """Real pairs' centre offsets in mean box widths and heights (train photos of several dogs)."""
    out = []
    for n in names:
        _, _, _, boxes = rows[n]
        for i in range(len(boxes)):
            for j in range(i + 1, len(boxes)):
                a, b = boxes[i], boxes[j]
                mw = ((a[2] - a[0]) + (b[2] - b[0])) / 2
                mh = ((a[3] - a[1]) + (b[3] - b[1])) / 2
                dx = abs((a[0] + a[2]) - (b[0] + b[2])) / 2 / mw
                dy = ((b[1] + b[3]) - (a[1] + a[3])) / 2 / mh
                out.append((dx, dy))
    return out


def feather(size, ramp):
    w, h = size
    x = np.minimum(np.arange(w) + 1, w - np.arange(w)) / max(1, ramp)
    y = np.minimum(np.arange(h) + 1, h - np.arange(h)) / max(1, ramp)
    return Image.fromarray((np.clip(np.minimum.outer(y, x), 0, 1) * 255).astype(np.uint8))


def paired(rng, img, boxes, other, other_boxes, offsets):
    """`other`'s first dog pasted beside `img`'s largest, at a real pair's offset."""
    w, h = img.size
    a = max(boxes, key=lambda b: (b[2] - b[0]) * (b[3] - b[1]))
    b = other_boxes[0]
    m = rng.uniform(0.04, 0.15)
    bw, bh = b[2] - b[0], b[3] - b[1]
    ow, oh = other.size
    cut = (max(0, b[0] - m * bw), max(0, b[1] - m * bh), min(ow, b[2] + m * bw), min(oh, b[3] + m * bh))
    s = (a[3] - a[1]) * rng.uniform(0.6, 1.4) / bh
    s = min(s, 0.95 * h / (cut[3] - cut[1]), 0.8 * w / (cut[2] - cut[0]))
    if s <= 0.05:
        return None
    for _ in range(8):
        dx, dy = offsets[rng.randrange(len(offsets))]
        mw, mh = ((a[2] - a[0]) + bw * s) / 2, ((a[3] - a[1]) + bh * s) / 2
        cx = (a[0] + a[2]) / 2 + rng.choice((-1, 1)) * dx * mw
        cy = (a[1] + a[3]) / 2 + dy * mh
        # Where the cut lands: its box's centre at (cx, cy), moved inside the photo.
        px0 = cx - ((b[0] + b[2]) / 2 - cut[0]) * s
        py0 = cy - ((b[1] + b[3]) / 2 - cut[1]) * s
        cw, ch = (cut[2] - cut[0]) * s, (cut[3] - cut[1]) * s
        px0, py0 = min(max(0, px0), w - cw), min(max(0, py0), h - ch)
        nb = (px0 + (b[0] - cut[0]) * s, py0 + (b[1] - cut[1]) * s, px0 + (b[2] - cut[0]) * s, py0 + (b[3] - cut[1]) * s)
        # The pasted part may hide at most 40 % of any dog already there.
        hidden = [max(0, min(d[2], px0 + cw) - max(d[0], px0)) * max(0, min(d[3], py0 + ch) - max(d[1], py0))
                  / max(1e-6, (d[2] - d[0]) * (d[3] - d[1])) for d in boxes]
        if max(hidden) > 0.4:
            continue
        piece = other.crop(tuple(int(round(v)) for v in cut)).resize((max(1, int(cw)), max(1, int(ch))), Image.BILINEAR)
        out = img.copy()
        out.paste(piece, (int(px0), int(py0)), feather(piece.size, max(2, int(0.05 * min(piece.size)))))
        # A dog hidden along one whole side keeps the part that shows.
        kept = []
        for d, hid in zip(boxes, hidden):
            d = list(d)
            if hid > 0 and py0 <= d[1] and py0 + ch >= d[3]:
                if px0 <= d[0] < px0 + cw: d[0] = px0 + cw
                elif px0 < d[2] <= px0 + cw: d[2] = px0
            kept.append(tuple(d))
        return out, kept + [nb]
    return None


def mosaic(rng, pieces, height=400):
    """Photos side by side at one height (or, for two, one above the other at one width)."""
    if len(pieces) == 2 and rng.random() < 0.3:
        width = 400
        scaled = [(im.resize((width, max(1, int(im.size[1] * width / im.size[0]))), Image.BILINEAR), width / im.size[0], bx)
                  for im, bx in pieces]
        out = Image.new("RGB", (width, sum(s[0].size[1] for s in scaled)))
        y, boxes = 0, []
        for im, s, bx in scaled:
            out.paste(im, (0, y))
            boxes += [(x0 * s, y + y0 * s, x1 * s, y + y1 * s) for x0, y0, x1, y1 in bx]
            y += im.size[1]
        return out, boxes
    scaled = [(im.resize((max(1, int(im.size[0] * height / im.size[1])), height), Image.BILINEAR), height / im.size[1], bx)
              for im, bx in pieces]
    out = Image.new("RGB", (sum(s[0].size[0] for s in scaled), height))
    x, boxes = 0, []
    for im, s, bx in scaled:
        out.paste(im, (x, 0))
        boxes += [(x + x0 * s, y0 * s, x + x1 * s, y1 * s) for x0, y0, x1, y1 in bx]
        x += im.size[0]
    return out, boxes


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--restored", required=True, help="the Stanford photos restored to their proportions, with boxes.tsv")
    ap.add_argument("--train", required=True, help="Stanford's splits/train.txt")
    ap.add_argument("--validation", required=True, help="the held-out photos (combined-validation.txt)")
    ap.add_argument("--cats", help="a folder of photos without a dog")
    ap.add_argument("--part", choices=("train", "validation"), required=True)
    ap.add_argument("--resize", type=int, required=True)
    ap.add_argument("--crop", type=int, required=True)
    ap.add_argument("--pairs", type=float, default=0.5)
    ap.add_argument("--mosaics", type=float, default=0.15)
    ap.add_argument("--close-ups", type=float, default=0.0,
                    help="the share of photos that also give a close view of a dog (issue 70)")
    ap.add_argument("--several-again", type=int, default=0,
                    help="photos of several dogs give this many more views at other scales (they are few)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    rows = read_boxes(os.path.join(a.restored, "boxes.tsv"))
    held = {l.strip() for l in open(a.validation) if l.strip()}
    train = [l.split()[0] for l in open(a.train) if l.strip()]
    names = [n for n in train if (n in held) == (a.part == "validation") and n in rows]
    cats = sorted(os.path.join(a.cats, f) for f in os.listdir(a.cats)) if a.cats else []
    offsets = pair_offsets(rows, [n for n in names if len(rows[n][3]) >= 2])
    with_dogs = [n for n in names if rows[n][3]]
    views, meta = open(a.out + ".u8", "wb"), []

    def emit(img, boxes, source):
        crop, placed = layout(img, boxes, a.resize, a.crop)
        views.write(np.asarray(crop, dtype=np.uint8).tobytes())
        meta.append({"source": source, "boxes": [[round(v, 5) for v in b] for b in placed]})

    for i, n in enumerate(names):
        _, w, h, boxes = rows[n]
        img, bx = load(a.restored, n, w, h, boxes)
        if a.part == "validation":
            emit(img, bx, n)
            emit(*mirrored(img, bx), n + "#mirrored")
            continue
        if rng.random() < 0.5:
            img, bx = mirrored(img, bx)
        emit(img, bx, n)
        if not bx:
            continue
        emit(*zoomed(rng, *mirrored(img, bx)), n + "#scaled")
        for k in range(a.several_again if len(bx) >= 2 else 0):
            emit(*zoomed(rng, *(mirrored(img, bx) if k % 2 else (img, bx))), n + f"#scaled{k + 2}")
        if rng.random() < a.pairs:
            o = with_dogs[rng.randrange(len(with_dogs))]
            _, ow, oh, ob = rows[o]
            other, obx = load(a.restored, o, ow, oh, ob)
            if rng.random() < 0.5:
                other, obx = mirrored(other, obx)
            made = paired(rng, img, bx, other, obx, offsets)
            if made:
                emit(*made, n + "#pair")
        if a.close_ups and rng.random() < a.close_ups:
            made = close_up(rng, img, bx)
            if made:
                emit(*made, n + "#close")
        if rng.random() < a.mosaics:
            k = 2 if rng.random() < 0.7 else 3
            parts = [(img, bx)] + [load(a.restored, m, *rows[m][1:3], rows[m][3])
                                   for m in (with_dogs[rng.randrange(len(with_dogs))] for _ in range(k - 1))]
            emit(*mosaic(rng, parts), n + "#mosaic")
        if i % 500 == 0:
            print(f"\r{i} of {len(names)}", end="", file=sys.stderr)
    for c in cats:
        img = Image.open(c).convert("RGB")
        emit(img, [], c)
        emit(img.transpose(Image.FLIP_LEFT_RIGHT), [], c + "#mirrored")
    views.close()
    json.dump({"crop": a.crop, "views": meta}, open(a.out + ".json", "w"))
    print(f"\n{len(meta)} views", file=sys.stderr)


if __name__ == "__main__":
    main()
