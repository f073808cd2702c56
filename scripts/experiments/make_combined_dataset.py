"""Makes the data set the bundled models train on: Stanford Dogs' 120 breeds and more-breeds-224's 13, as one
folder of class folders (symbolic links to the photos in ../shared, which stays read-only), with split files:
  splits/train.txt      Stanford's train split, and more-breeds' train and valid splits (what training may see)
  splits/validation.txt the part of train.txt the bundled models chose on (combined-validation.txt beside this
                        script: a seeded 10 % of each breed, kept as a list so the bundled models can be remade exactly)
  splits/test.txt       Stanford's test split and more-breeds' test split (only measured)
  splits/test-stanford.txt, splits/test-more.txt   each test split on its own
With --stanford, Stanford's photos are taken from that folder instead (the same relative paths): the bundled models
use the shared photos restored to their true proportions (`DedogBench restore-proportions`, issue 50), whose
boxes.tsv is linked into the data set. more-breeds-224 has no original sizes: its photos stay the stretched squares.
The photos listed in --removed (scripts/experiments/more-breeds-removed.tsv: wrong labels and duplicates, with why)
are left out of every split; more-breeds' coyotes are not a breed and are left out too (they are checked apart).
"""
import argparse, os
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--shared", type=Path, required=True)
parser.add_argument("--removed", type=Path, required=True)
parser.add_argument("--out", type=Path, required=True)
parser.add_argument("--stanford", type=Path, help="Stanford's photos from here (restored), not ../shared's squares")
parser.add_argument("--validation", type=Path, default=Path(__file__).with_name("combined-validation.txt"))
args = parser.parse_args()

# The links must not depend on the folder they were made from: a relative ../shared would leave them broken.
args.shared = args.shared.resolve()
stanford_lists = args.shared / "datasets/stanford-dogs-224"
stanford = (args.stanford or stanford_lists).resolve()
more = args.shared / "datasets/more-breeds-224"
removed = {line.split("\t")[0] for line in open(args.removed, encoding="utf-8") if line.strip() and not line.startswith("#")}
(args.out / "splits").mkdir(parents=True, exist_ok=True)


def link(source: Path, relative: str):
    target = args.out / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.is_symlink():
        os.symlink(source, target)


splits = {"train": [], "test-stanford": [], "test-more": []}
for name, split in (("train", "train"), ("test", "test-stanford")):
    for line in open(stanford_lists / f"splits/{name}.txt", encoding="utf-8"):
        relative = line.split("\t")[0].strip()
        if relative:
            link(stanford / relative, relative)
            splits[split].append(relative)
for name, split in (("train", "train"), ("valid", "train"), ("test", "test-more")):
    for line in open(more / f"splits/{name}.txt", encoding="utf-8"):
        relative = line.strip()
        if not relative or relative.startswith("coyote") or relative in removed:
            continue
        link(more / relative, relative)
        splits[split].append(relative)
if args.stanford and (stanford / "boxes.tsv").exists():
    link(stanford / "boxes.tsv", "boxes.tsv")
chosen_on = {line.strip() for line in open(args.validation, encoding="utf-8") if line.strip()}
splits["validation"] = sorted(r for r in splits["train"] if r in chosen_on)
assert len(splits["validation"]) == len(chosen_on), "the validation list names photos outside the train split"
for name, rows in splits.items():
    (args.out / f"splits/{name}.txt").write_text("".join(f"{r}\t{r.split('/')[0]}\n" for r in rows), encoding="utf-8")
(args.out / "splits/test.txt").write_text("".join(f"{r}\t{r.split('/')[0]}\n" for r in splits["test-stanford"] + splits["test-more"]),
                                         encoding="utf-8")
print({k: len(v) for k, v in splits.items()}, f"{len(removed)} removed")
