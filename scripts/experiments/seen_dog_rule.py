#!/usr/bin/env python3
"""The seen-dog rule (issue 70, `SeenDogRule` in Sources/DedogBreedModel/Verdict.swift): a photo the ImageNet heads
would answer "no dog" stays a dog where the model's detector finds one and the breed heads are sure of its breed.

  views   close views of the held-out part of Stanford's train split (restored to its proportions), made as the
          detector's close-ups are (detector_views.close_up: the dog filling or leaving the frame, half a dog, a
          head), written as JPEGs with a list: photos with a dog that the backbones never saw as they are;
  choose  from `DedogBench seen-dog MODEL LIST` lines of those views (--dogs) and of photos without a dog made from
          ../shared (--no-dogs: pets-real's cats, Stanford's parts beside every dog's box, the coyotes of
          more-breeds-224's train and validation splits), the rule: for each detector score and breed probability,
          the lowest dog share at which no photo without a dog is turned into a dog, `--margin` above the highest
          such photo's, and how many of the dogs answered "no dog" it gives back; the rule that gives back the most
          is taken. `--check` says what it changes on other photos (Stanford's test parts, the test coyotes,
          pets-real's dogs), not chosen on.

Neither the test split nor amateur-pets is read: amateur-pets checks the rule afterwards
(scripts/experiments/held-back-check).
"""
import argparse, json, os, random, sys


def make_views(a):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from detector_views import close_up, load, read_boxes  # Pillow: scripts/.work/venv-bench
    rows = read_boxes(os.path.join(a.restored, "boxes.tsv"))
    held = [l.strip() for l in open(a.validation) if l.strip().startswith("n02")]
    rng = random.Random(a.seed)
    os.makedirs(a.out, exist_ok=True)
    listed = []
    for n in held:
        if n not in rows or not rows[n][3]:
            continue
        _, w, h, boxes = rows[n]
        img, bx = load(a.restored, n, w, h, boxes)
        for k in range(a.per_photo):
            made = close_up(rng, img, bx)
            if not made:
                continue
            path = os.path.join(a.out, n.replace("/", "_")[:-4] + f"-close{k}.jpg")
            made[0].save(path, quality=90)
            listed.append(path)
    with open(os.path.join(a.out, "views.txt"), "w") as f:
        f.write("".join(p + "\n" for p in listed))
    print(f"{len(listed)} close views of {len(held)} held-out photos -> {a.out}/views.txt")


def read(path):
    rows = [json.loads(l) for l in open(path) if l.strip()]
    return [r for r in rows if "error" not in r]


def choose(a):
    dogs, others = read(a.dogs), read(a.no_dogs)
    # Only photos the heads answer "no dog" and the cat rule does not: the rule can change no other.
    lost = [r for r in dogs if r["verdict"] == "noDog" and not r["cat"]]
    open_ = [r for r in others if r["verdict"] == "noDog" and not r["cat"]]
    print(f"dogs: {len(dogs)} photos, {len(lost)} answered no dog (not as cats); "
          f"without a dog: {len(others)} photos, {len(open_)} answered no dog (not as cats), "
          f"{sum(r['verdict'] != 'noDog' for r in others)} already answered as a dog")
    print("\n| detector from | breed from | highest dog share of a photo without a dog passing both | dog share from | dogs given back |")
    print("|---|---|---|---|---|")
    best = None
    for d in a.detector_from:
        for b in a.breed_from:
            passing = [r["dog"] for r in open_ if r.get("detector", 0) >= d and r["p1"] >= b]
            worst = max(passing, default=0.0)
            share = max(a.share_floor, worst + a.margin)
            back = sum(1 for r in lost if r.get("detector", 0) >= d and r["p1"] >= b and r["dog"] >= share)
            print(f"| {d:.2f} | {b:.2f} | {worst:.3f} ({len(passing)} photos) | {share:.3f} | {back} of {len(lost)} |")
            # The most dogs given back; of equals, the first (the lowest detector score, then breed probability).
            if best is None or back > best[3]:
                best = (d, b, share, back)
    d, b, share, back = best
    rule = {"detectorFrom": round(d, 4), "breedFrom": round(b, 4), "dogShareFrom": round(share, 4)}
    print(f"\nchosen: {json.dumps(rule)} ({back} of {len(lost)} dogs given back, no photo without a dog changed)")
    if a.out:
        with open(a.out, "w") as f:
            json.dump(rule, f)
    for path in a.check or []:
        rows = read(path)
        flipped = [r for r in rows if r["verdict"] == "noDog" and not r["cat"] and r.get("detector", 0) >= d
                   and r["p1"] >= b and r["dog"] >= share]
        print(f"check {path}: {len(flipped)} of {sum(r['verdict'] == 'noDog' for r in rows)} 'no dog' answers of "
              f"{len(rows)} photos become a dog" + "".join(f"\n  {r['file']}" for r in flipped))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="step", required=True)
    v = sub.add_parser("views")
    v.add_argument("--restored", required=True, help="Stanford restored to its proportions, with boxes.tsv")
    v.add_argument("--validation", required=True, help="the held-out photos (combined-validation.txt)")
    v.add_argument("--per-photo", type=int, default=2)
    v.add_argument("--seed", type=int, default=70)
    v.add_argument("--out", required=True)
    c = sub.add_parser("choose")
    c.add_argument("--dogs", required=True, help="DedogBench seen-dog lines of photos with a dog")
    c.add_argument("--no-dogs", required=True, help="DedogBench seen-dog lines of photos without one")
    c.add_argument("--detector-from", type=float, nargs="+", default=[0.3, 0.4, 0.5])
    c.add_argument("--breed-from", type=float, nargs="+", default=[0.8, 0.9, 0.95])
    c.add_argument("--margin", type=float, default=0.02, help="the dog share's margin over the photos without a dog")
    c.add_argument("--share-floor", type=float, default=0.15, help="never below this dog share (half the default's "
                   "noDogBelow: under it the heads see no dog)")
    c.add_argument("--check", nargs="*", help="more DedogBench seen-dog lines, not chosen on: what the rule changes there")
    c.add_argument("--out", help="the chosen rule's JSON, for DedogBench set-seen-dog-rule")
    a = ap.parse_args()
    make_views(a) if a.step == "views" else choose(a)


if __name__ == "__main__":
    main()
