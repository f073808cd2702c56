"""Check sets for "not one of my breeds" (issue 24, point 5), made from the train split only by transforms.

make_own_breed_sets.py DATASET OUT SEED

For each draw (seed): 4 own breeds and 16 other breeds, picked at random from the 120.
  train-N/<breed>/   N photos of each own breed (N = 3, 10, 30; hard links into pool/), each a "real photo" made by transform
  own/<breed>/       20 other photos of each own breed, transformed the same way, independently
  other/<breed>/     10 photos of each of the 16 other breeds, transformed
A transform: a random frame (aspect 0.6-1.8, 55-100 % of the area), resized so the longer side is 180-640 px,
brightness/contrast/saturation 0.75-1.25, white balance gains 0.92-1.08, blur (radius 0-1.2) in half of them,
JPEG quality 35-90. No photo is in two sets; no test-split photo is used.
"""
import os, random, sys
from PIL import Image, ImageEnhance, ImageFilter

root = sys.argv[1]; out = sys.argv[2]; seed = int(sys.argv[3])
rng = random.Random(seed)
by_class = {}
for line in open(os.path.join(root, "splits/train.txt")):
    path, cls = line.split()
    by_class.setdefault(cls, []).append(path)
classes = sorted(by_class)
picked = rng.sample(classes, 20)
own, others = picked[:4], picked[4:]

def transform(path, dest):
    im = Image.open(os.path.join(root, path)).convert("RGB")
    w, h = im.size
    aspect = rng.uniform(0.6, 1.8); area = rng.uniform(0.55, 1.0) * w * h
    cw = min(w, int(round((area * aspect) ** 0.5))); ch = min(h, int(round((area / aspect) ** 0.5)))
    x = rng.randint(0, w - cw); y = rng.randint(0, h - ch)
    im = im.crop((x, y, x + cw, y + ch))
    longer = rng.randint(180, 640); s = longer / max(cw, ch)
    im = im.resize((max(1, round(cw * s)), max(1, round(ch * s))), Image.BICUBIC)
    im = ImageEnhance.Brightness(im).enhance(rng.uniform(0.75, 1.25))
    im = ImageEnhance.Contrast(im).enhance(rng.uniform(0.75, 1.25))
    im = ImageEnhance.Color(im).enhance(rng.uniform(0.75, 1.25))
    gains = [rng.uniform(0.92, 1.08) for _ in range(3)]
    im = Image.merge("RGB", [b.point(lambda v, g=g: min(255, int(v * g))) for b, g in zip(im.split(), gains)])
    if rng.random() < 0.5: im = im.filter(ImageFilter.GaussianBlur(rng.uniform(0, 1.2)))
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    im.save(dest, "JPEG", quality=rng.randint(35, 90))

for cls in own:
    photos = rng.sample(by_class[cls], 50)
    for i, p in enumerate(photos[:30]):
        transform(p, os.path.join(out, "pool", cls, f"{i:02d}.jpg"))
    for i, p in enumerate(photos[30:]):
        transform(p, os.path.join(out, "own", cls, f"{i:02d}.jpg"))
    for n in (3, 10, 30):
        for i in range(n):
            d = os.path.join(out, f"train-{n}", cls); os.makedirs(d, exist_ok=True)
            src = os.path.join(out, "pool", cls, f"{i:02d}.jpg")
            os.link(src, os.path.join(d, f"{i:02d}.jpg"))
for cls in others:
    for i, p in enumerate(rng.sample(by_class[cls], 10)):
        transform(p, os.path.join(out, "other", cls, f"{i:02d}.jpg"))
print(out, "own:", own)
