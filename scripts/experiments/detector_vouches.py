#!/usr/bin/env python3
"""Could the dog detector vouch for a dog the ImageNet heads call "no dog" (issue 62, point 4)? From `DedogBench detect
MODEL ROOT LIST OUT --crops` on pets-real's dogs and cats and more-breeds' coyotes (each photo: whether the whole photo
is a dog; each box from a score of 0.15 with whether its crop is a dog), for each detector score t: the photos answered
"no dog" that a box from t would turn into a dog, (a) the box alone, (b) a box whose crop, looked at on its own, is a
dog. Dogs turned are right answers won; cats and coyotes turned are wrong answers made.

  for s in dogs cats; do (cd ../shared/datasets/pets-real && find $s -type f | sort | sed 's/$/\tx/') > $s.txt; done
  (cd "../shared/datasets/more-breeds-224" && find "coyote (not a dog)" -name '*.jpg' | sort | sed 's/$/\tx/') > coyotes.txt
  DedogBench detect default ../shared/datasets/pets-real dogs.txt OUT/default-dogs --crops   # cats the same
  DedogBench detect default ../shared/datasets/more-breeds-224 coyotes.txt OUT/default-coyotes --crops
  detector_vouches.py OUT/default
"""
import json, sys


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    prefix = sys.argv[1]
    sets = {s: [json.loads(l) for l in open(f"{prefix}-{s}-crops.jsonl")] for s in ["dogs", "cats", "coyotes"]}
    for s, photos in sets.items():
        no_dog = sum(not p["dog"] for p in photos)
        print(f"{s}: {len(photos)} photos, \"no dog\" {no_dog} ({100 * no_dog / len(photos):.1f} %)")
    print("\n| from a score of | dogs won: a box | cats lost: a box | coyotes lost: a box "
          "| dogs won: a box whose crop is a dog | cats lost: the same | coyotes lost: the same |")
    print("|---|---|---|---|---|---|---|")
    for t in [0.15, 0.2, 0.25, 0.3, 0.32, 0.4, 0.5, 0.6, 0.7]:
        row = [sum(1 for p in sets[s] if not p["dog"] and any(b[4] >= t and (b[5] or not crop) for b in p["boxes"]))
               for crop in (False, True) for s in ("dogs", "cats", "coyotes")]
        print(f"| {t:.2f} | " + " | ".join(map(str, row)) + " |")


if __name__ == "__main__":
    main()
