"""Check sets for teaching a breed from a few photos (`dedog learn` of a breed the model does not know), made by
transforms (real_photo.py) from more-breeds-224 and the Stanford Dogs photos the bundled models validate on.

make_teaching_sets.py MORE_BREEDS COMBINED OUT [--removed TSV] [--seed S] [--photos N]

  teach/<breed>/   N photos (3) of each of more-breeds' 13 breeds, from its train split
  check/<breed>/   every other photo of that breed (train, valid and test splits), transformed independently
  others/<class>/  2 photos of each Stanford Dogs breed from COMBINED/splits/validation.txt (never trained on)
Photos the cleaning removed (scripts/experiments/more-breeds-removed.tsv) are left out; coyotes are not a breed.
"""
import argparse, os, random
from pathlib import Path
import real_photo

parser = argparse.ArgumentParser()
parser.add_argument("more", type=Path)
parser.add_argument("combined", type=Path)
parser.add_argument("out", type=Path)
parser.add_argument("--removed", type=Path)
parser.add_argument("--seed", type=int, default=1)
parser.add_argument("--photos", type=int, default=3)
args = parser.parse_args()
rng = random.Random(args.seed)
removed = set()
if args.removed:
    removed = {line.split("\t")[0] for line in open(args.removed, encoding="utf-8") if line.strip() and not line.startswith("#")}
by_split = {}
for split in ("train", "valid", "test"):
    for line in open(args.more / "splits" / f"{split}.txt", encoding="utf-8"):
        path = line.strip()
        if path and not path.startswith("coyote") and path not in removed:
            by_split.setdefault(path.split("/")[0], {}).setdefault(split, []).append(path)
for breed in sorted(by_split):
    train = sorted(by_split[breed]["train"])
    taught = rng.sample(train, args.photos)
    rest = sorted(p for s in by_split[breed].values() for p in s if p not in taught)
    for i, p in enumerate(taught):
        real_photo.transform(args.more / p, args.out / "teach" / breed / f"{i:02d}.jpg", rng)
    for i, p in enumerate(rest):
        real_photo.transform(args.more / p, args.out / "check" / breed / f"{i:03d}.jpg", rng)
stanford = {}
for line in open(args.combined / "splits" / "validation.txt", encoding="utf-8"):
    path, cls = line.rstrip("\n").split("\t")
    if cls.startswith("n0"):
        stanford.setdefault(cls, []).append(path)
for cls in sorted(stanford):
    for i, p in enumerate(rng.sample(sorted(stanford[cls]), 2)):
        real_photo.transform(os.path.realpath(args.combined / p), args.out / "others" / cls / f"{i}.jpg", rng)
print(args.out, {k: len(v) for k, v in (("breeds", by_split), ("others", stanford))})
