#!/usr/bin/env python3
"""Reads `dedog classify --format json` lines (stdin or files) of photos in class folders (the folder a photo is in
is its breed's model key) and prints, per file given: photos, top-1, named right, the share of right answers held
back ("a breed this model does not know", "unsure" or "no dog"), "no dog", named confidently (a breed named, right
or wrong: for photos of a breed the model does not know, every one is wrong), and the mean similarity (cosine to the top
breed's prototype) and top probability of the right answers: the rule's signals, to see them shift between photos
the backbones learnt and photos they did not (issue 70).

  held_back.py NAME=answers.jsonl ...
"""
import json, os, sys

print("| photos | n | top-1 | named right | right answers held back | no dog | named confidently | similarity (right) | p1 (right) |")
print("|---|---|---|---|---|---|---|---|---|")
for arg in sys.argv[1:]:
    name, path = arg.split("=", 1)
    rows = [json.loads(l) for l in open(path) if l.strip()]
    rows = [r for r in rows if not r.get("error")]
    n = len(rows)
    right = [r for r in rows if r["breeds"] and r["breeds"][0]["key"] == os.path.basename(os.path.dirname(r["file"]))]
    named = [r for r in right if r["verdict"] == "dog"]
    held = len(right) - len(named)
    nodog = sum(r["verdict"] == "noDog" for r in rows)
    sim = [r["similarity"] for r in right if r.get("similarity") is not None]
    p1 = [r["breeds"][0]["probability"] for r in right]
    mean = lambda xs: sum(xs) / len(xs) if xs else float("nan")
    print(f"| {name} | {n} | {len(right) / n:.1%} | {len(named) / n:.1%} | {held / max(1, len(right)):.1%} | {nodog / n:.1%} | "
          f"{sum(r['verdict'] == 'dog' for r in rows) / n:.1%} | "
          f"{mean(sim):.3f} | {mean(p1):.3f} |")
