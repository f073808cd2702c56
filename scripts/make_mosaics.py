"""Makes photos of dogs of different breeds from one-dog photos, and scores dedog's answers on them.

    python3 scripts/make_mosaics.py --boxes ../shared/datasets/stanford-dogs-224/boxes.tsv \
        --images ../shared/datasets/stanford-dogs-224 --out /tmp/mosaics [--split test] [--count 60] [--seed 1] \
        [--layout side|grid]
    dedog classify --json /tmp/mosaics > /tmp/mosaics.jsonl
    python3 scripts/make_mosaics.py --out /tmp/mosaics --score /tmp/mosaics.jsonl

Making (without --score)
  From the rows of `--split` in the boxes TSV that show one dog, each mosaic takes photos of different breeds (the
  breed is the photo's folder, e.g. `n02085620-Chihuahua`), each photo at most once; `--seed` makes the choice
  repeatable. `side` puts two photos side by side (left, right); `grid` puts four in a 2 × 2 grid (left to right,
  top to bottom). Every photo of a mosaic is scaled to the same height, the smallest of theirs, so that no dog
  is enlarged; in a grid the narrower row is centred on grey. A photo whose file is not the TSV's width × height
  (Stanford Dogs 224 × 224 files are stretched squares) is first resized to it, which restores its proportions and
  puts its box where the TSV says. Mosaics are JPEG (quality 92), named mosaic-001.jpg, …

  OUTDIR/mosaics.tsv has the columns `file split width height dogs boxes breeds sources`: the first six as in
  boxes.tsv (boxes mapped into the mosaic's pixels, in the order of the breeds), so scripts/bench_detector.py can
  score a detector on the mosaics; `breeds` and `sources` list each dog's breed and source photo, `;`-separated.

Scoring (--score RESULTS.jsonl)
  Reads `dedog classify --json` lines (see Sources/Dedog/ClassificationRecord.swift) for the mosaics of OUTDIR,
  matched by file name. A line's dogs are its `dogs` entries (each with `verdict`, `breeds`, `location`) or, when
  `dogs` is empty, the whole photo's answer as one dog. A breed counts as named when a dog with verdict `dog` (a
  breed named; not `unsure`, `noDog` or `otherBreed`) has it as its top breed (`breeds[0].key`), and as named on
  its dog when that dog's `location` has its centre inside the breed's box. Prints the share of mosaics with
  every breed named, with at least one named, with every breed named on its dog, and with 2+ dogs answered.
"""
import argparse, csv, json, os, random, re, sys, tempfile
from collections import defaultdict
from pathlib import Path

from PIL import Image, ImageOps

COLUMNS = ["file", "split", "width", "height", "dogs", "boxes", "breeds", "sources"]
PHOTOS_PER_LAYOUT = {"side": 2, "grid": 4}
GREY = (128, 128, 128)
NAMED = "dog"  # Verdict.dog: the verdict that names a breed
MOSAIC_NAME = re.compile(r"mosaic-\d+\.jpg")


def fail(message):
    sys.exit(f"make_mosaics: {message}")


def write_atomically(path, write):
    """Calls write(temporary path) and renames the file into place, so no reader sees half a file."""
    with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", suffix=path.suffix, delete=False) as f:
        temporary = Path(f.name)
    try:
        write(temporary)
        # A temporary file is private (0600); the mosaics are for any reader.
        temporary.chmod(0o644)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def parse_box(text):
    return [float(v) for v in text.split(",")]


def read_one_dog_photos(path, split):
    """{breed: [(file, width, height, box)]} of the split's photos that show one dog, in file order."""
    by_breed = defaultdict(list)
    with open(path, newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if row["split"] == split and row["dogs"] == "1":
                breed = row["file"].split("/")[0]
                by_breed[breed].append((row["file"], int(row["width"]), int(row["height"]), parse_box(row["boxes"])))
    for photos in by_breed.values():
        photos.sort()
    return dict(sorted(by_breed.items()))


def choose(by_breed, count, per_mosaic, seed):
    """`count` lists of photos of `per_mosaic` different breeds; no photo is used twice."""
    rng = random.Random(seed)
    unused = {breed: list(photos) for breed, photos in by_breed.items()}
    mosaics = []
    for _ in range(count):
        breeds = [breed for breed, photos in unused.items() if photos]
        if len(breeds) < per_mosaic:
            fail(f"only {len(mosaics)} mosaics could be made: fewer than {per_mosaic} breeds have unused one-dog photos")
        mosaics.append([unused[breed].pop(rng.randrange(len(unused[breed]))) for breed in rng.sample(breeds, per_mosaic)])
    return mosaics


def load(images, file, width, height):
    """The photo upright, at the TSV's width × height (the pixels its box is given in)."""
    with Image.open(images / file) as photo:
        photo = ImageOps.exif_transpose(photo).convert("RGB")
    return photo if photo.size == (width, height) else photo.resize((width, height), Image.LANCZOS)


def compose(images, parts):
    """The mosaic and each dog's box in its pixels (x0, y0, x1, y1), in the order of parts."""
    photos = [load(images, file, width, height) for file, width, height, _ in parts]
    height = min(photo.height for photo in photos)
    scaled = []
    for photo, (_, _, _, box) in zip(photos, parts):
        sx, sy = 1, 1
        if photo.height != height:
            width = max(1, round(photo.width * height / photo.height))
            sx, sy = width / photo.width, height / photo.height
            photo = photo.resize((width, height), Image.LANCZOS)
        scaled.append((photo, [box[0] * sx, box[1] * sy, box[2] * sx, box[3] * sy]))
    # Two photos a row: `side` is one row, `grid` two.
    rows = [scaled[i:i + 2] for i in range(0, len(scaled), 2)]
    widths = [sum(photo.width for photo, _ in row) for row in rows]
    mosaic = Image.new("RGB", (max(widths), height * len(rows)), GREY)
    boxes = []
    for r, (row, row_width) in enumerate(zip(rows, widths)):
        x = (mosaic.width - row_width) // 2
        for photo, (x0, y0, x1, y1) in row:
            y = r * height
            mosaic.paste(photo, (x, y))
            boxes.append([min(max(round(v), lo), hi) for v, lo, hi in (
                (x0 + x, x, x + photo.width), (y0 + y, y, y + height),
                (x1 + x, x, x + photo.width), (y1 + y, y, y + height))])
            x += photo.width
    return mosaic, boxes


def make(args):
    if not args.boxes or not args.images:
        fail("--boxes and --images are needed to make mosaics")
    per_mosaic = PHOTOS_PER_LAYOUT[args.layout]
    chosen = choose(read_one_dog_photos(args.boxes, args.split), args.count, per_mosaic, args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    digits = max(3, len(str(args.count)))
    names = [f"mosaic-{i:0{digits}d}.jpg" for i in range(1, args.count + 1)]
    # Mosaics of an earlier, larger run would be classified with these and have no row in mosaics.tsv.
    for old in args.out.iterdir():
        if MOSAIC_NAME.fullmatch(old.name) and old.name not in names:
            old.unlink()
    rows = []
    for name, parts in zip(names, chosen):
        mosaic, boxes = compose(args.images, parts)
        write_atomically(args.out / name, lambda path: mosaic.save(path, "JPEG", quality=92))
        rows.append({"file": name, "split": args.split, "width": mosaic.width, "height": mosaic.height,
                     "dogs": len(parts), "boxes": ";".join(",".join(map(str, box)) for box in boxes),
                     "breeds": ";".join(file.split("/")[0] for file, *_ in parts),
                     "sources": ";".join(file for file, *_ in parts)})

    def write_table(path):
        with open(path, "w", newline="") as f:
            table = csv.DictWriter(f, COLUMNS, delimiter="\t", lineterminator="\n")
            table.writeheader()
            table.writerows(rows)

    write_atomically(args.out / "mosaics.tsv", write_table)
    print(f"{len(rows)} {args.layout} mosaics of {per_mosaic} breeds each in {args.out}")


def answered_dogs(record):
    """Each dog the answer names: (verdict, top breed key or None, location or None)."""
    entries = record.get("dogs") or [record]
    return [(entry.get("verdict"), (entry.get("breeds") or [{}])[0].get("key"), entry.get("location"))
            for entry in entries]


def centre_inside(location, box):
    if not location:
        return False
    x = location["x"] + location["width"] / 2
    y = location["y"] + location["height"] / 2
    return box[0] <= x <= box[2] and box[1] <= y <= box[3]


def score(args):
    with open(args.out / "mosaics.tsv", newline="") as f:
        mosaics = {row["file"]: row for row in csv.DictReader(f, delimiter="\t")}
    # dedog prints the path it was given (folder included): the mosaic is known by its file name.
    results = {}
    with open(args.score) as f:
        for line, text in enumerate(f, start=1):
            if not text.strip():
                continue
            try:
                record = json.loads(text)
                name = Path(record["file"]).name
            except (ValueError, KeyError, TypeError) as error:
                fail(f"{args.score}:{line}: not a dedog classify --json line ({error})")
            if name not in mosaics:
                continue
            if name in results:
                fail(f"{args.score}:{line}: a second answer for {name}")
            results[name] = record
    missing = sorted(set(mosaics) - set(results))
    if missing:
        fail(f"{len(missing)} of {len(mosaics)} mosaics have no answer in {args.score} (first: {missing[0]})")

    every = some = every_on_its_dog = several = 0
    for name, row in mosaics.items():
        breeds = row["breeds"].split(";")
        boxes = [parse_box(box) for box in row["boxes"].split(";")]
        dogs = answered_dogs(results[name])
        named = [(key, location) for verdict, key, location in dogs if verdict == NAMED]
        found = [any(key == breed for key, _ in named) for breed in breeds]
        on_its_dog = [any(key == breed and centre_inside(location, box) for key, location in named)
                      for breed, box in zip(breeds, boxes)]
        every += all(found)
        some += any(found)
        every_on_its_dog += all(on_its_dog)
        several += len(dogs) >= 2

    total = len(mosaics)
    print(f"| {total} mosaics ({args.score}) | share | mosaics |")
    print("|---|---|---|")
    for label, n in (("every breed named", every), ("at least one breed named", some),
                     ("every breed named on its dog", every_on_its_dog), ("answered as 2+ dogs", several)):
        print(f"| {label} | {100 * n / total:.1f} % | {n} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--boxes", type=Path, help="boxes.tsv: file split width height dogs boxes")
    parser.add_argument("--images", type=Path, help="the folder holding the TSV's files")
    parser.add_argument("--split", default="test")
    parser.add_argument("--count", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--layout", choices=sorted(PHOTOS_PER_LAYOUT), default="side",
                        help="side: two breeds side by side; grid: four breeds in 2 × 2")
    parser.add_argument("--out", type=Path, required=True, help="the mosaics' folder")
    parser.add_argument("--score", type=Path, metavar="RESULTS.jsonl",
                        help="score dedog classify --json output for the mosaics of --out instead of making them")
    args = parser.parse_args()
    if args.count < 1:
        fail("--count must be at least 1")
    if args.score:
        score(args)
    else:
        make(args)


if __name__ == "__main__":
    main()
