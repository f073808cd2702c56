#!/usr/bin/env python3
"""Photos without a dog, made from Stanford Dogs' own (issue 71): of each photo restored to its proportions, the
largest strip beside, above or below every dog's box (boxes.tsv), kept when it is at least 96 pixels each way and a
fifth of the photo; a margin of 8 pixels is left to the boxes. Photos seen to show a dog Stanford did not box are
left out (stanford-unboxed-dogs.tsv). Writes OUT/<file> as JPEG and prints the paths written.

  no_dog_parts.py --boxes boxes.tsv --restored .work/stanford-restored --split test|train --every N --out OUT
"""
import argparse, csv, os
from PIL import Image

p = argparse.ArgumentParser()
p.add_argument("--boxes", required=True)
p.add_argument("--restored", required=True)
p.add_argument("--split", required=True)
p.add_argument("--every", type=int, default=1)
p.add_argument("--unboxed", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "stanford-unboxed-dogs.tsv"))
p.add_argument("--out", required=True)
a = p.parse_args()
unboxed = {line.split("\t")[0].strip() for line in open(a.unboxed) if line.strip() and not line.startswith("#")}
rows = [r for r in csv.DictReader(open(a.boxes), delimiter="\t") if r["split"] == a.split and r["file"] not in unboxed]
margin = 8
for r in rows[::a.every]:
    w, h = int(r["width"]), int(r["height"])
    boxes = [[int(v) for v in b.split(",")] for b in r["boxes"].split(";") if b]
    if not boxes:
        continue
    x0 = max(0, min(b[0] for b in boxes) - margin); y0 = max(0, min(b[1] for b in boxes) - margin)
    x1 = min(w, max(b[2] for b in boxes) + margin); y1 = min(h, max(b[3] for b in boxes) + margin)
    strips = [(0, 0, x0, h), (x1, 0, w, h), (0, 0, w, y0), (0, y1, w, h)]
    strips = [s for s in strips if s[2] - s[0] >= 96 and s[3] - s[1] >= 96 and (s[2] - s[0]) * (s[3] - s[1]) * 5 >= w * h]
    if not strips:
        continue
    best = max(strips, key=lambda s: (s[2] - s[0]) * (s[3] - s[1]))
    target = os.path.join(a.out, r["file"])
    os.makedirs(os.path.dirname(target), exist_ok=True)
    Image.open(os.path.join(a.restored, r["file"])).convert("RGB").crop(best).save(target, quality=90)
    print(target)
