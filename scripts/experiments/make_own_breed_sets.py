"""Check sets for "not one of my breeds" (issue 24, point 5), made from the train split only by transforms.

make_own_breed_sets.py DATASET OUT SEED

For each draw (seed): 4 own breeds and 16 other breeds, picked at random from the 120.
  train-N/<breed>/   N photos of each own breed (N = 3, 10, 30; hard links into pool/), each a "real photo" made by transform
  own/<breed>/       20 other photos of each own breed, transformed the same way, independently
  other/<breed>/     10 photos of each of the 16 other breeds, transformed
A transform: real_photo.py. No photo is in two sets; no test-split photo is used.
"""
import os, random, sys
import real_photo

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
    real_photo.transform(os.path.join(root, path), dest, rng)

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
