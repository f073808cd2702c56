"""Scores a dog detector's boxes against the ground-truth boxes of a boxes.tsv.

    python3 scripts/bench_detector.py --boxes ../shared/datasets/stanford-dogs-224/boxes.tsv \
        --detections detections.jsonl [--split test] [--json scores.json] [--allow-missing] [--unboxed TSV]

Inputs
  --boxes       a TSV with the header `file split width height dogs boxes`: `boxes` holds `x0,y0,x1,y1` per dog in
                the photo's pixels, separated by `;` (empty for a photo without a dog). Only rows of `--split` count.
                The mosaics.tsv of scripts/make_mosaics.py has the same columns, so mosaics are scored the same way.
  --detections  JSON Lines, one object per photo: {"file": <the TSV's path>, "width": W, "height": H,
                "boxes": [[x0, y0, x1, y1, score], …], "threshold": T}. `boxes` holds every candidate down to a low
                score (for AP); `threshold` is the score from which the product reports a dog. A detector that saw the
                photo at another size (W × H instead of the TSV's width × height) has its boxes scaled onto the
                TSV's pixels.

What it measures
  a) Box average precision, COCO style, for one category "dog": AP at IoU 0.5 and AP averaged over IoU
     0.50:0.05:0.95, both over at most `--max-dets` boxes per photo (highest scores first). Computed twice, by
     pycocotools (COCOeval, bbox) and by the numpy code below, which follows COCO's definition without its code:
     per photo, detections in descending score take the unmatched ground-truth box they overlap most (IoU at
     least the threshold); over all photos, detections sorted by score give a precision/recall curve; precision
     is made non-increasing in recall and read at the 101 recalls 0, 0.01, …, 1 (0 beyond the highest recall
     reached), and AP is the mean of those 101 values. Two independent implementations that agree (to ~1e-3;
     a warning says when not) are the check that the numbers mean what COCO's do.
  b) At the operating point (boxes with score ≥ the photo's threshold, "reported"): the share of photos of 2+
     dogs with 2+ boxes reported; the share of one-dog photos with 2+ boxes ("split"); the share of dogs matched
     by a reported box at IoU ≥ 0.5 (greedy by score, one box per dog); the share of reported boxes that match a
     dog that way; the share of photos without a dog that get a box; mean boxes reported per photo.
  c) How many photos of each kind (0, 1, 2+ dogs) and dogs were scored.
  d) With --unboxed (scripts/experiments/stanford-unboxed-dogs.tsv: photos seen to show a dog Stanford did not box),
     the split again over the one-dog photos not in that list: finding a dog without a box is not a split. The
     listed photos are not counted as photos of several dogs (only flagged photos were looked at).

Prints markdown tables; `--json OUT` also writes the numbers as JSON. Photos of the split missing from the
detections are an error (their count is given) unless `--allow-missing`: then they are left out of every number.
Detections of photos outside the split are ignored (with a note on stderr).
"""
import argparse, contextlib, csv, io, json, os, sys, tempfile
from pathlib import Path

import numpy as np

# COCO's IoU thresholds, made the same way so that boundary cases (IoU exactly 0.7…) fall alike in both.
IOU_THRESHOLDS = np.linspace(0.5, 0.95, int(np.round((0.95 - 0.5) / 0.05)) + 1, endpoint=True)
RECALL_POINTS = np.linspace(0.0, 1.00, int(np.round((1.00 - 0.0) / 0.01)) + 1, endpoint=True)
AGREEMENT = 1e-3


class Photo:
    """One photo of the split: its ground truth and, once read, its detections in the TSV's pixels."""

    def __init__(self, file, width, height, truth):
        self.file, self.width, self.height = file, width, height
        self.truth = truth                   # (dogs, 4) x0, y0, x1, y1
        self.boxes = np.zeros((0, 4))        # every candidate, highest score first
        self.scores = np.zeros(0)
        self.threshold = None

    @property
    def reported(self):
        return self.boxes[self.scores >= self.threshold]


def fail(message):
    sys.exit(f"bench_detector: {message}")


def parse_boxes(text, where):
    if not text.strip():
        return np.zeros((0, 4))
    try:
        boxes = np.array([[float(v) for v in part.split(",")] for part in text.split(";")])
    except ValueError:
        fail(f"{where}: boxes {text!r} are not numbers")
    if boxes.shape[1] != 4:
        fail(f"{where}: each box needs x0,y0,x1,y1, got {text!r}")
    return boxes


def read_truth(path, split):
    with open(path, newline="") as f:
        reader = csv.DictReader(f, delimiter="\t")
        rows = list(reader)
    missing = {"file", "split", "width", "height", "dogs", "boxes"} - set(reader.fieldnames or [])
    if missing:
        fail(f"{path} lacks the columns {', '.join(sorted(missing))}")
    photos = {}
    for line, row in enumerate(rows, start=2):
        if row["split"] != split:
            continue
        where = f"{path}:{line}"
        truth = parse_boxes(row["boxes"] or "", where)
        if len(truth) != int(row["dogs"]):
            fail(f"{where}: dogs is {row['dogs']} but {len(truth)} boxes are given")
        if row["file"] in photos:
            fail(f"{where}: {row['file']} is listed twice")
        photos[row["file"]] = Photo(row["file"], int(row["width"]), int(row["height"]), truth)
    if not photos:
        fail(f"{path} has no photo in the split {split!r}")
    return photos


def read_detections(path, photos):
    """Fills each photo's detections; returns how many lines named photos outside the split."""
    outside, seen = 0, set()
    with open(path) as f:
        for line, text in enumerate(f, start=1):
            if not text.strip():
                continue
            where = f"{path}:{line}"
            try:
                record = json.loads(text)
                file, width, height = record["file"], float(record["width"]), float(record["height"])
                threshold, candidates = float(record["threshold"]), record["boxes"]
            except (ValueError, KeyError, TypeError) as error:
                fail(f"{where}: not a detection record ({error})")
            photo = photos.get(file)
            if photo is None:
                outside += 1
                continue
            if file in seen:
                fail(f"{where}: {file} has a second line")
            seen.add(file)
            if not isinstance(candidates, list) or any(not isinstance(c, list) or len(c) != 5 for c in candidates):
                fail(f"{where}: each box needs x0, y0, x1, y1, score")
            try:
                boxes = np.array(candidates, dtype=float).reshape(-1, 5)
            except (ValueError, TypeError):
                fail(f"{where}: boxes that are not numbers")
            # The detector may have seen the photo at another size; the truth is in the TSV's pixels.
            scale = np.array([photo.width / width, photo.height / height] * 2)
            # Stable, so that equal scores keep the file's order, as COCOeval keeps them.
            order = np.argsort(-boxes[:, 4], kind="mergesort")
            photo.boxes, photo.scores = boxes[order, :4] * scale, boxes[order, 4]
            photo.threshold = threshold
    return outside


def iou(a, b):
    """IoU of every box of a (n, 4) with every box of b (m, 4), as COCO computes it (no +1 on sizes)."""
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    w = np.clip(np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0]), 0, None)
    h = np.clip(np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1]), 0, None)
    inter = w * h
    union = area_a[:, None] + area_b[None, :] - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)


def match(boxes, truth, thresholds):
    """Greedy matching of boxes (highest score first) to truth: for each threshold, whether each box took a dog.

    Returns a (thresholds, boxes) bool array. A box takes the unmatched dog it overlaps most, if that IoU reaches
    the threshold; all thresholds are done at once, one box at a time.
    """
    taken = np.zeros((len(thresholds), len(boxes)), dtype=bool)
    if len(boxes) == 0 or len(truth) == 0:
        return taken
    overlaps = iou(boxes, truth)
    free = np.ones((len(thresholds), len(truth)), dtype=bool)
    for d in range(len(boxes)):
        candidates = np.where(free & (overlaps[d][None, :] >= thresholds[:, None]), overlaps[d][None, :], -1.0)
        best = candidates.argmax(axis=1)
        hit = candidates[np.arange(len(thresholds)), best] >= 0
        taken[hit, d] = True
        free[np.nonzero(hit)[0], best[hit]] = False
    return taken


def average_precision_numpy(photos, max_dets):
    """(AP at each IoU threshold) by the definition in the docstring."""
    dogs = sum(len(p.truth) for p in photos)
    if dogs == 0:
        return None
    scores = np.concatenate([p.scores[:max_dets] for p in photos])
    if len(scores) == 0:
        return np.zeros(len(IOU_THRESHOLDS))
    hits = np.concatenate([match(p.boxes[:max_dets], p.truth, IOU_THRESHOLDS) for p in photos], axis=1)
    # Stable, so that equal scores stay in photo order, as in COCOeval.
    order = np.argsort(-scores, kind="mergesort")
    hits = hits[:, order]
    ap = np.zeros(len(IOU_THRESHOLDS))
    for t, row in enumerate(hits):
        tp = np.cumsum(row)
        fp = np.cumsum(~row)
        recall = tp / dogs
        precision = tp / np.maximum(tp + fp, np.finfo(float).eps)
        # The best precision at this recall or any higher one: the curve's upper envelope.
        precision = np.maximum.accumulate(precision[::-1])[::-1]
        at = np.searchsorted(recall, RECALL_POINTS, side="left")
        ap[t] = np.where(at < len(precision), precision[np.minimum(at, len(precision) - 1)], 0.0).mean()
    return ap


def average_precision_coco(photos, max_dets):
    """(AP at each IoU threshold) by pycocotools (imported here: the scripts that borrow this file's helpers,
    train_dog_detector.py and choose_detector_threshold.py, need no pycocotools)."""
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval
    images, annotations, results = [], [], []
    for image_id, p in enumerate(photos, start=1):
        images.append({"id": image_id, "file_name": p.file, "width": p.width, "height": p.height})
        for x0, y0, x1, y1 in p.truth:
            annotations.append({"id": len(annotations) + 1, "image_id": image_id, "category_id": 1, "iscrowd": 0,
                                "bbox": [x0, y0, x1 - x0, y1 - y0], "area": (x1 - x0) * (y1 - y0)})
        for (x0, y0, x1, y1), score in zip(p.boxes, p.scores):
            results.append({"image_id": image_id, "category_id": 1, "bbox": [x0, y0, x1 - x0, y1 - y0],
                            "score": float(score)})
    if not annotations:
        return None
    if not results:
        # loadRes cannot take an empty list; no box finds no dog.
        return np.zeros(len(IOU_THRESHOLDS))
    # pycocotools reports its progress on stdout, where the tables go.
    with contextlib.redirect_stdout(io.StringIO()):
        truth = COCO()
        truth.dataset = {"images": images, "annotations": annotations, "categories": [{"id": 1, "name": "dog"}]}
        truth.createIndex()
        evaluation = COCOeval(truth, truth.loadRes(results), "bbox")
        evaluation.params.maxDets = [1, 10, max_dets]
        evaluation.evaluate()
        evaluation.accumulate()
    # precision[T, R, K, A, M]: one category, area range "all", the largest maxDets.
    precision = evaluation.eval["precision"][:, :, 0, 0, -1]
    return np.where(precision > -1, precision, 0).mean(axis=1)


def read_unboxed(path):
    """The files of a stanford-unboxed-dogs.tsv: photos seen to show a dog Stanford did not box (# lines are
    comments)."""
    with open(path) as f:
        return {row["file"] for row in csv.DictReader((l for l in f if not l.startswith("#")), delimiter="\t")}


def operating_point(photos, unboxed=frozenset()):
    one = [p for p in photos if len(p.truth) == 1]
    several = [p for p in photos if len(p.truth) >= 2]
    none = [p for p in photos if len(p.truth) == 0]
    dogs = sum(len(p.truth) for p in photos)
    reported = sum(len(p.reported) for p in photos)
    # Each match pairs one box with one dog: the same count gives the share of dogs found and of boxes on a dog.
    matched = sum(int(match(p.reported, p.truth, np.array([0.5]))[0].sum()) for p in photos)

    def share(part, whole):
        return part / whole if whole else None

    thresholds = sorted({p.threshold for p in photos})
    return {
        "threshold": thresholds[0] if len(thresholds) == 1 else [thresholds[0], thresholds[-1]],
        "severalFound": share(sum(len(p.reported) >= 2 for p in several), len(several)),
        "split": share(sum(len(p.reported) >= 2 for p in one), len(one)),
        "splitSeenOne": share(sum(len(p.reported) >= 2 for p in one if p.file not in unboxed),
                              sum(p.file not in unboxed for p in one)),
        "dogsFound": share(matched, dogs),
        "boxesOnADog": share(matched, reported),
        "noDogWithBox": share(sum(len(p.reported) >= 1 for p in none), len(none)),
        "boxesPerPhoto": reported / len(photos),
        "reportedBoxes": reported,
    }


def percent(value):
    return "—" if value is None else f"{100 * value:.1f} %"


def decimal(value):
    return "—" if value is None else f"{value:.4f}"


def write_atomically(path, text):
    folder = os.path.dirname(os.path.abspath(path))
    with tempfile.NamedTemporaryFile("w", dir=folder, delete=False, suffix=".tmp") as f:
        f.write(text)
    # A temporary file is private (0600); the scores are for any reader.
    os.chmod(f.name, 0o644)
    os.replace(f.name, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--boxes", type=Path, required=True, help="ground truth: file split width height dogs boxes")
    parser.add_argument("--detections", type=Path, required=True, help="JSON Lines, one object per photo")
    parser.add_argument("--split", default="test")
    parser.add_argument("--max-dets", type=int, default=100, help="boxes per photo counted for AP (COCO's 100)")
    parser.add_argument("--json", type=Path, help="also write the numbers here as JSON")
    parser.add_argument("--allow-missing", action="store_true",
                        help="leave out photos of the split without detections instead of failing")
    parser.add_argument("--unboxed", type=Path,
                        help="photos seen to show a dog without a box (a TSV with a `file` column; # lines are comments)")
    args = parser.parse_args()
    unboxed = read_unboxed(args.unboxed) if args.unboxed else set()

    truth = read_truth(args.boxes, args.split)
    outside = read_detections(args.detections, truth)
    if outside:
        print(f"bench_detector: ignored {outside} detection lines for photos outside the {args.split} split",
              file=sys.stderr)
    missing = [p.file for p in truth.values() if p.threshold is None]
    if missing and not args.allow_missing:
        fail(f"{len(missing)} of {len(truth)} photos of the {args.split} split have no detections "
             f"(first: {missing[0]}); --allow-missing leaves them out")
    photos = [p for p in truth.values() if p.threshold is not None]
    if not photos:
        fail("no photo of the split has detections")

    coco = average_precision_coco(photos, args.max_dets)
    ours = average_precision_numpy(photos, args.max_dets)
    ap = {name: None if v is None else {"ap50": float(v[0]), "ap": float(v.mean())}
          for name, v in (("pycocotools", coco), ("numpy", ours))}
    if coco is not None and np.abs(coco - ours).max() > AGREEMENT:
        print(f"bench_detector: pycocotools and numpy AP differ by {np.abs(coco - ours).max():.4f} at some IoU",
              file=sys.stderr)
    counts = {"photos": len(photos), "noDog": sum(len(p.truth) == 0 for p in photos),
              "oneDog": sum(len(p.truth) == 1 for p in photos), "severalDogs": sum(len(p.truth) >= 2 for p in photos),
              "dogs": int(sum(len(p.truth) for p in photos)), "missing": len(missing)}
    at = operating_point(photos, unboxed)
    counts["unboxedLeftOut"] = sum(len(p.truth) == 1 and p.file in unboxed for p in photos)
    report = {"boxes": str(args.boxes), "detections": str(args.detections), "split": args.split,
              "maxDets": args.max_dets, "counts": counts, "ap": ap, "operatingPoint": at}

    threshold = at["threshold"]
    threshold = f"{threshold:g}" if not isinstance(threshold, list) else f"{threshold[0]:g}–{threshold[1]:g}"
    left_out = f", {counts['missing']} without detections left out" if counts["missing"] else ""
    print(f"{args.detections} on the {args.split} split of {args.boxes}: {counts['photos']} photos "
          f"({counts['noDog']} without a dog, {counts['oneDog']} with one, {counts['severalDogs']} with 2+), "
          f"{counts['dogs']} dogs{left_out}.\n")
    print(f"| box AP (≤ {args.max_dets} boxes per photo) | pycocotools | numpy |")
    print("|---|---|---|")
    for label, key in (("IoU 0.50", "ap50"), ("IoU 0.50:0.95", "ap")):
        values = [decimal(ap[name][key] if ap[name] else None) for name in ("pycocotools", "numpy")]
        print(f"| {label} | {' | '.join(values)} |")
    print(f"\n| at threshold {threshold} | share | of |")
    print("|---|---|---|")
    print(f"| 2+ dogs: 2+ boxes reported | {percent(at['severalFound'])} | {counts['severalDogs']} photos |")
    print(f"| 1 dog: 2+ boxes reported (split) | {percent(at['split'])} | {counts['oneDog']} photos |")
    if args.unboxed:
        print(f"| 1 dog, those seen to show a dog without a box left out: split | {percent(at['splitSeenOne'])} "
              f"| {counts['oneDog'] - counts['unboxedLeftOut']} photos |")
    print(f"| dogs matched by a box (IoU ≥ 0.5) | {percent(at['dogsFound'])} | {counts['dogs']} dogs |")
    print(f"| boxes on a dog (IoU ≥ 0.5) | {percent(at['boxesOnADog'])} | {at['reportedBoxes']} boxes |")
    print(f"| no dog: a box reported | {percent(at['noDogWithBox'])} | {counts['noDog']} photos |")
    print(f"| boxes per photo | {at['boxesPerPhoto']:.3f} | {counts['photos']} photos |")
    if args.json:
        write_atomically(args.json, json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
