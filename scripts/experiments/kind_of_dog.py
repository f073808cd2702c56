"""The kind of dog when the breed is not named (`KindRule` in Sources/DedogBreedModel/Verdict.swift): how often a
fold model, answering a photo of a breed it was trained without, can say the breed's FCI group or section, and how
often that is right.

Per fold model (unknown_breeds.py --out SIGNALS.npz, with the verdicts of fit_unknown_breed_rule.py --answers
ANSWERS.npz: the rule fitted on the other folds): the breed probabilities added up by the catalogue's kinds of the
model's breeds (a breed the catalogue gives no FCI group adds to none). The answers measured are the held-out breeds'
photos answered "a breed this model does not know" or "unsure" (never a test split); their true kind is their
breed's in the catalogue (photos of held-out breeds the catalogue has no group for are left out, and counted apart).
A threshold is the lowest mass at which the kind said is right at least --aim (80 %) of the time; each fold is scored
with thresholds chosen on the other folds, and the rule written (--out) has the thresholds chosen on all of them.
Ways compared: the group alone; with --sections also the section where the catalogue has one, else the group (each
with its own threshold, the section's first, searched together).

Usage: kind_of_dog.py SIGNALS.npz ANSWERS.npz --catalogue breeds.json [--aim 0.8] [--sections] [--mode group|section]
         [--out KIND.json]
"""
import argparse, json
import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("signals")
parser.add_argument("answers")
parser.add_argument("--catalogue", required=True)
parser.add_argument("--aim", type=float, default=0.8)
parser.add_argument("--sections", action="store_true", help="also measure sections (else the group); slow")
parser.add_argument("--mode", choices=["group", "section"], default="group", help="which way --out writes")
parser.add_argument("--sources", default="original",
                    help="the photos measured, by source (unknown_breeds.py --views: original, or a view's name; all: every one)")
parser.add_argument("--out")
args = parser.parse_args()

catalogue = json.load(open(args.catalogue, encoding="utf-8"))["breeds"]
kind_of_key = {}
for breed in catalogue:
    if breed.get("fci"):
        for key in breed["labels"]:
            kind_of_key[key] = (breed["fci"]["group"], breed["fci"].get("section"))
everything = list(np.load(args.signals, allow_pickle=True)["folds"])
folds = [f for f in everything if (~f["is_known"]).any()]
answers = np.load(args.answers)


def best_kinds(f):
    """Per photo, once per fold: the most probable group and section (the breed probabilities added up by kind), their
    masses, and whether each is the photo's true kind."""
    kinds = [kind_of_key.get(str(k)) for k in f["labels"]]
    truth = [kind_of_key.get(str(folder)) for folder in f["folder"]]
    p = f["probabilities"].astype(np.float64)
    out = {}
    for level, key in (("group", lambda k: k[0]), ("section", lambda k: k if k[1] else None)):
        values = sorted({key(k) for k in kinds if k and key(k) is not None})
        mass = np.stack([p[:, [i for i, k in enumerate(kinds) if k and key(k) == v]].sum(1) for v in values], 1)
        best = mass.argmax(1)
        right = np.array([t is not None and key(t) == values[b] for t, b in zip(truth, best)])
        out[level] = (mass.max(1), right)
    return out


best_of = {}


def said(f, mode, group_from, section_from):
    """Per photo: whether a kind is said (a section from `section_from` in mode "section", else the group from
    `group_from`) and whether it is right."""
    if id(f) not in best_of:
        best_of[id(f)] = best_kinds(f)
    best = best_of[id(f)]
    (g_mass, g_right), (s_mass, s_right) = best["group"], best["section"]
    section = (s_mass >= section_from) if mode == "section" else np.zeros(len(g_mass), dtype=bool)
    group = ~section & (g_mass >= group_from)
    return section | group, (section & s_right) | (group & g_right)


measured_of = {}


def measured(f, i):
    """The held-out breeds' photos with a known kind, answered without a breed (another breed or unsure)."""
    if i not in measured_of:
        measured_of[i] = unknown_answers(f, i)
    return measured_of[i]


def unsure(f, i):
    """Fold i's "unsure" answers as fit_unknown_breed_rule.py counted them (its unsure thresholds), else the model's."""
    return answers[f"unsure_{i}"] if f"unsure_{i}" in answers.files else f["unsure"]


def unknown_answers(f, i):
    other = answers[f"other_{i}"]
    unknown = ~f["is_known"]
    if args.sources != "all" and "source" in f:
        unknown = unknown & np.isin(f["source"], args.sources.split(","))
    has_truth = np.array([kind_of_key.get(str(folder)) is not None for folder in f["folder"]])
    not_named = (other | unsure(f, i)) & ~f["noDog"]
    return unknown & not_named & has_truth


def choose(fs, indices, mode):
    """The lowest thresholds (group, section) at which the kind said is right at least `aim` of the time over `fs`."""
    grid = np.arange(0.30, 0.99, 0.01)
    best = None
    for section_from in (grid if mode == "section" else [np.inf]):
        for group_from in grid:
            said_n = right_n = 0
            for f, i in zip(fs, indices):
                rows = measured(f, i)
                s, right = said(f, mode, group_from, section_from)
                said_n += (s & rows).sum(); right_n += (right & rows).sum()
            if said_n and right_n / said_n >= args.aim:
                if best is None or said_n > best[0]:
                    best = (said_n, group_from, section_from)
                break  # the lowest group threshold for this section threshold
    return (best[1], best[2]) if best else (np.inf, np.inf)


modes = ("group", "section") if args.sections or args.mode == "section" else ("group",)
for mode in modes:
    print(f"\n== {mode}{' (else the group)' if mode == 'section' else ''}: each fold scored with thresholds chosen on the others")
    total_said = total_right = total = 0
    for i, f in enumerate(folds):
        others = [j for j in range(len(folds)) if j != i]
        group_from, section_from = choose([folds[j] for j in others], others, mode)
        rows = measured(f, i)
        s, right = said(f, mode, group_from, section_from)
        s = s & rows
        total_said += s.sum(); total_right += (right & s).sum(); total += rows.sum()
        print(f"fold {i + 1}: thresholds group {group_from:.2f}, section {section_from:.2f}; "
              f"{rows.sum()} unknown-breed answers; kind said {s.mean() / max(rows.mean(), 1e-9):.1%}, "
              f"right {(right & s).sum() / max(s.sum(), 1):.1%}")
    print(f"all folds: kind said for {total_said / total:.1%} of {total} unknown-breed answers, right {total_right / max(total_said, 1):.1%}")

results = {}
for mode in modes:
    results[mode] = choose(folds, range(len(folds)), mode)
    print(f"\nchosen on all folds, {mode}: group from {results[mode][0]:.2f}, section from {results[mode][1]:.2f}")
# Other checks at the chosen thresholds: photos of held-out breeds the catalogue has no group for, and the known
# breeds' unsure answers (their own breed's kind is the truth).
for mode in modes:
    group_from, section_from = results[mode]
    no_truth = said_known = right_known = unsure_known = 0
    for i, f in enumerate(folds):
        s, right = said(f, mode, group_from, section_from)
        has_truth = np.array([kind_of_key.get(str(x)) is not None for x in f["folder"]])
        lacking = ~f["is_known"] & ~has_truth & (answers[f"other_{i}"] | unsure(f, i)) & ~f["noDog"]
        no_truth += (s & lacking).sum()
        known_unsure = f["is_known"] & unsure(f, i) & ~answers[f"other_{i}"] & ~f["noDog"] & has_truth
        unsure_known += known_unsure.sum(); said_known += (s & known_unsure).sum(); right_known += (right & s & known_unsure).sum()
    print(f"{mode}: known breeds' unsure answers: kind said {said_known / max(unsure_known, 1):.1%} of {unsure_known}, "
          f"right {right_known / max(said_known, 1):.1%}; held-out breeds without a group in the catalogue: a kind said {no_truth} times")
if args.out:
    group_from, section_from = results[args.mode]
    rule = {"groupFrom": round(float(group_from), 2)}
    if args.mode == "section":
        rule["sectionFrom"] = round(float(section_from), 2)
    json.dump(rule, open(args.out, "w"), indent=1)
    print(f"\nrule ({args.mode}): {json.dumps(rule)}")
