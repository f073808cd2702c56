#!/usr/bin/env python3
"""Views of photos that make them unlike their memorised selves (issue 70): every Stanford Dogs photo is in ImageNet's
training set, so the frozen backbones know each one; a crop that cuts the dog, a closer or wider view, blur, low
resolution, noise or other light makes it a photo they have not seen. Writes OUT/<view>/<class folder>/<file> for
each photo listed (restored to its proportions, boxes from boxes.tsv), seeded so that every machine makes the same.

  transformed_views.py --boxes boxes.tsv --restored .work/stanford-restored --list FILES --out OUT [--views a,b]
                       [--pick N]

With --pick N, each photo gets N of the views, drawn (seeded by its name) from --views: the views the unknown-breed
rule is fitted on (fit_unknown_breed_rule.py), one for each photo, so that the views weigh as much as the originals.
A photo without a box in boxes.tsv (more-breeds-224's) has the whole photo for its box.

Views: cut (the dog's box with one side cut by 35 % of its size, so the dog leaves the frame), closer (the box with
a 5 % margin), wider (the photo in a frame 1.6 times its size, grey), blur (Gaussian, 2 % of the shorter side),
lowres (a quarter of the size, scaled back up), noise (Gaussian, sigma 14 of 255), dim (brightness 0.55, warm).
"""
import argparse, csv, os, random
from PIL import Image, ImageEnhance, ImageFilter
import numpy as np

VIEWS = ["cut", "closer", "wider", "blur", "lowres", "noise", "dim"]
p = argparse.ArgumentParser()
p.add_argument("--boxes", required=True)
p.add_argument("--restored", required=True)
p.add_argument("--list", required=True, help="one file per line, relative to --restored")
p.add_argument("--out", required=True)
p.add_argument("--views", default=",".join(VIEWS))
p.add_argument("--pick", type=int, help="this many of the views for each photo, drawn at random (seeded)")
a = p.parse_args()
boxes = {r["file"]: [[int(v) for v in b.split(",")] for b in r["boxes"].split(";") if b]
         for r in csv.DictReader(open(a.boxes), delimiter="\t")}
views = a.views.split(",")
for line in open(a.list):
    name = line.split("\t")[0].strip()
    if not name:
        continue
    rng = random.Random(name)
    image = Image.open(os.path.join(a.restored, name)).convert("RGB")
    w, h = image.size
    box = boxes.get(name, [[0, 0, w, h]])[0]
    x0, y0, x1, y1 = box
    for view in (sorted(rng.sample(views, a.pick), key=views.index) if a.pick else views):
        if view == "cut":
            side = rng.choice("lrtb")
            bw, bh = x1 - x0, y1 - y0
            c = [x0, y0, x1, y1]
            if side == "l": c[0] += int(0.35 * bw)
            if side == "r": c[2] -= int(0.35 * bw)
            if side == "t": c[1] += int(0.35 * bh)
            if side == "b": c[3] -= int(0.35 * bh)
            out = image.crop(tuple(c))
        elif view == "closer":
            mx, my = int(0.05 * (x1 - x0)), int(0.05 * (y1 - y0))
            out = image.crop((max(0, x0 - mx), max(0, y0 - my), min(w, x1 + mx), min(h, y1 + my)))
        elif view == "wider":
            W, H = int(w * 1.6), int(h * 1.6)
            out = Image.new("RGB", (W, H), (128, 128, 128))
            out.paste(image, ((W - w) // 2, (H - h) // 2))
        elif view == "blur":
            out = image.filter(ImageFilter.GaussianBlur(0.02 * min(w, h)))
        elif view == "lowres":
            out = image.resize((max(1, w // 4), max(1, h // 4)), Image.BILINEAR).resize((w, h), Image.BILINEAR)
        elif view == "noise":
            arr = np.asarray(image).astype(np.float32)
            arr += np.random.default_rng(rng.randrange(1 << 30)).normal(0, 14, arr.shape)
            out = Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8))
        elif view == "dim":
            out = ImageEnhance.Brightness(image).enhance(0.55)
            r, g, b = out.split()
            out = Image.merge("RGB", (r.point(lambda v: min(255, int(v * 1.08))), g, b.point(lambda v: int(v * 0.85))))
        else:
            raise SystemExit(f"unknown view {view}")
        target = os.path.join(a.out, view, name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        out.save(target, quality=92)
