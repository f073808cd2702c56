#!/usr/bin/env python3
"""Chooses `ZoomPolicy.heldBackNamedFrom` (issue 70) from `DedogBench held-back-look` rows: KNOWN, photos of breeds the
model knows (the folder a photo is in is its breed's key), and HELD, photos of breeds taken out of the model. For each
threshold, the right answers the held-back dog's own look names (of all right answers) against the held-out breeds'
photos it names (of all of them). With --shifted KNOWN2 HELD2 (the same photos through a model whose unknown-breed rule
threshold was moved: model_edit.py --rule-shift), the same two counts for moving the threshold instead.

  held_back_look.py KNOWN.jsonl HELD.jsonl [--shifted KNOWN2.jsonl HELD2.jsonl]"""
import argparse, json, os

p = argparse.ArgumentParser()
p.add_argument("known"); p.add_argument("held")
p.add_argument("--shifted", nargs=2)
a = p.parse_args()

def rows(path):
    return {r["file"]: r for r in map(json.loads, open(path)) if "error" not in r}

def truth(r):
    return os.path.basename(os.path.dirname(r["file"]))

def named_by_look(r, threshold):
    return (r["verdict"] == "otherBreed" and r.get("lookVerdict") == "dog" and r.get("lookBreed") == r["breed"]
            and r.get("lookP1", 0) >= threshold)

known, held = rows(a.known), rows(a.held)
right = [r for r in known.values() if r["breed"] == truth(r)]
looked = sum("lookVerdict" in r for r in list(known.values()) + list(held.values()))
print(f"{len(known)} photos of known breeds ({len(right)} right at top-1), {len(held)} of held-out breeds; "
      f"{looked} looked at again")
print("| look names from | right answers named too | held-out breeds' photos named too |")
print("|---|---|---|")
for threshold in (0, 0.5, 0.8, 0.9, 0.95, 0.98):
    k = sum(named_by_look(r, threshold) for r in right)
    h = sum(named_by_look(r, threshold) for r in held.values())
    print(f"| {threshold} | {k} ({k / len(right):.2%}) | {h} ({h / len(held):.2%}) |")
if a.shifted:
    known2, held2 = rows(a.shifted[0]), rows(a.shifted[1])
    k = sum(known2[f]["verdict"] == "dog" for f in (r["file"] for r in right)) - sum(r["verdict"] == "dog" for r in right)
    h = sum(r["verdict"] == "dog" for r in held2.values()) - sum(r["verdict"] == "dog" for r in held.values())
    print(f"| the rule's threshold moved instead | {k} ({k / len(right):.2%}) | {h} ({h / len(held):.2%}) |")
