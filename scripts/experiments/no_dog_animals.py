"""What the ImageNet heads see besides dogs, on real pets (issue 50): the study behind DecisionThresholds' cat rule.

For each photo of `DedogBench features MODEL LIST OUT` this computes, in numpy, the ImageNet heads' combined
probabilities as `Model.decide` does (each backbone's softmax at its temperature, averaged), then the mass on dogs,
on cats (ImageNetKind.cat: the five house cats and the eight big cats) and on other animals, and prints what each
rule would answer "no dog" on each group of photos: pets-real's cats (should all be "no dog"), pets-real's dogs and
the validation photos of the combined data set (none should be), more-breeds' coyotes (all should be).
  python3 no_dog_animals.py --features OUT --model MODEL
"""
import argparse
import sys
import numpy as np
from pathlib import Path
sys.path.insert(0, str(Path(__file__).parent))
from dedog_model import read_model, read_features, imagenet, no_dog_today

parser = argparse.ArgumentParser()
parser.add_argument("--features", type=Path, required=True)
parser.add_argument("--model", type=Path, required=True)
args = parser.parse_args()

description, tensor = read_model(args.model)
backbones = description["backbones"]
paths, x = read_features(args.features, len(backbones))
p, labels = imagenet(description, tensor, x)
keys = [l["key"].split("-")[0] for l in labels]
dogs = np.array([l["isDog"] for l in labels])
cats = np.array(["n02123045" <= k <= "n02130308" for k in keys])  # tabby … cheetah
animals = np.array([k < "n02666196" for k in keys]) & ~dogs & ~cats  # ImageNet's animals come before "abacus"
dog, cat, animal = p[:, dogs].sum(1), p[:, cats].sum(1), p[:, animals].sum(1)
top_other = p[:, ~dogs].max(1)

group = np.array(["cats" if "/pets-real/cats/" in q else "dogs" if "/pets-real/dogs/" in q else
                  "coyotes" if "coyote" in q else "validation" for q in paths])
threshold = description["decision"]["noDogBelow"]
today = no_dog_today(description, p, labels)
print(f"no-dog threshold {threshold}; photos: " + ", ".join(f"{g} {(group == g).sum()}" for g in np.unique(group)))


def show(name, rule):
    print(f"{name:58s}" + "  ".join(f"{g} {100 * rule[group == g].mean():5.1f} %" for g in ("cats", "dogs", "validation", "coyotes")))


show("today's rule", today)
for ratio in (0.5, 1, 2, 4):
    show(f"today, or cats >= {ratio} x dogs", today | (cat >= ratio * dog))
for ratio in (0.5, 1, 2):
    for floor in (0.05, 0.1, 0.2):
        show(f"today, or cats >= {ratio} x dogs and cats >= {floor}", today | ((cat >= ratio * dog) & (cat >= floor)))
for ratio in (0.5, 1, 2):
    show(f"today, or cats+animals >= {ratio} x dogs", today | (cat + animal >= ratio * dog))
missed = np.where((group == "cats") & ~(today | (cat >= dog)))[0]
print("cats still answered as a dog with cats >= dogs:", len(missed))
for i in missed[:40]:
    best = np.argsort(-p[i])[:3]
    print(f"  {Path(paths[i]).name}: dog {dog[i]:.2f} cat {cat[i]:.2f} animal {animal[i]:.2f} | " + ", ".join(f"{labels[j]['name']} {p[i, j]:.2f}" for j in best))
lost = np.where((group != "cats") & (group != "coyotes") & ~today & (cat >= dog))[0]
print("dogs answered no dog by cats >= dogs:", len(lost))
for i in lost[:20]:
    best = np.argsort(-p[i])[:3]
    print(f"  {'/'.join(Path(paths[i]).parts[-2:])}: dog {dog[i]:.2f} cat {cat[i]:.2f} | " + ", ".join(f"{labels[j]['name']} {p[i, j]:.2f}" for j in best))
