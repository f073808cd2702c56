"""Does the "breed this model does not know" rule lose more known photos on real photos than on the stretched
squares it was set on? Makes a "real photo" (real_photo.py: a random frame of any aspect, resized, recoloured,
blurred, recompressed) of every photo of COMBINED/splits/validation.txt (never trained on), classifies the originals
and those with `dedog classify --json`, and prints for each set the share of photos named right without the rule
(top breed right, over the model's unsure thresholds, a dog seen) and the share the rule answers "a breed this model
does not know" instead.

rule_on_real_photos.py DEDOG MODEL COMBINED OUT [--seed S]     (needs PIL: scripts/.work/venv-bench/bin/python)
"""
import argparse, json, random, struct, subprocess
from pathlib import Path
import real_photo

parser = argparse.ArgumentParser()
parser.add_argument("dedog", type=Path)
parser.add_argument("model", type=Path)
parser.add_argument("combined", type=Path)
parser.add_argument("out", type=Path)
parser.add_argument("--seed", type=int, default=1)
args = parser.parse_args()
rng = random.Random(args.seed)
raw = args.model.read_bytes()
decision = json.loads(json.loads(raw[8:8 + struct.unpack("<Q", raw[:8])[0]])["__metadata__"]["dedog.model"])["decision"]
for i, line in enumerate((args.combined / "splits" / "validation.txt").read_text().splitlines()):
    rel, folder = line.split("\t")
    original = args.out / "originals" / folder / f"{i:04d}.jpg"
    original.parent.mkdir(parents=True, exist_ok=True)
    if not original.exists():
        original.symlink_to((args.combined / rel).resolve())
    real_photo.transform(args.combined / rel, args.out / "real" / folder / f"{i:04d}.jpg", rng)
for name in ("originals", "real"):
    answers = subprocess.run([str(args.dedog), "classify", "--json", "-k", "3", "--model", str(args.model), str(args.out / name)],
                             check=True, capture_output=True, text=True).stdout.splitlines()
    named = lost = 0
    for r in map(json.loads, answers):
        b = r["breeds"]
        if not b or b[0]["key"] != Path(r["file"]).parent.name or r["verdict"] == "noDog":
            continue
        p1, p2 = b[0]["probability"], (b[1]["probability"] if len(b) > 1 else 0)
        if p1 < decision["unsureBelow"] or p1 - p2 < decision["unsureMargin"]:
            continue
        named += 1
        lost += r["verdict"] == "otherBreed"
    print(f"{name}: {len(answers)} photos; named right without the rule {named / len(answers):.1%}; "
          f"answered \"a breed this model does not know\" instead {lost / len(answers):.1%} ({lost})")
