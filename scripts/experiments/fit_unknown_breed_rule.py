"""Fits the rule of "a breed this model does not know" (`UnknownBreedRule` in Sources/DedogBreedModel/Verdict.swift)
on the per-photo signals unknown_breeds.py saved, and prints the trade-off it was chosen from.

The folds: models trained with breeds held out. Known photos: a fold model's own breeds' validation photos; unknown
ones: the held-out breeds' training photos; never a test split. The model the rule is for is given to
unknown_breeds.py without a held-out list: only its known (validation) photos.

Each model's signals are standardised by its own known photos (mean and spread): a model of more breeds gives lower
top probabilities and energies to the same photo, so that fold models' raw signals sit elsewhere than the final
model's. The rule is a logistic regression on the standardised signals, classes balanced, fitted on all folds; in the
file its `mean` and `scale` are the final model's, and its threshold (`below`) is where the verdict holds back at
most LOST (5 %) of the right answers among the final model's known photos restored to their true proportions
(Stanford's, their folders WordNet ids): photos whose top breed is right, counted whatever the verdict, as
`scripts/bench-real-photos` counts them; those answered "no dog" first are never taken. The stretched squares of
more-breeds-224 are left out of the threshold: real photos are not stretched, and the rule took 4.4 % of the right
answers of restored photos when it was set on 3 % of all known photos together.

Held back: answered "a breed this model does not know" by the rule, or "unsure" (the top breed under
--unsure-below, or leading the second by less than --unsure-margin): both name no breed, so they share one budget of
right answers. The margin was 0.15, set by hand before the rule existed, and the rule had 3 % of the right answers to
itself on top of the ~2 % the margin held back (the default model); spent by the rule instead (margin 0, the same 5 %
held back in all), the folds name 42.6 % of the held-out breeds' photos confidently instead of 48.8 %, for known
breeds named wrongly but confidently 7.5 % of their photos instead of 6.8 % (`--unsure-margin 0.15` prints the old
way's table). The rule file carries the unsure thresholds, and set-unknown-breed-rule writes them with it.

The table: for several shares of right answers taken (restored known photos), per fold, the rule fitted on the
*other* folds and thresholded on this fold's own known photos (no fold is scored by a rule fitted on it): the share of unknown photos still answered
with a confident breed (the rest are "another breed", "unsure" or "no dog"), and known breeds' photos named wrongly but
confidently.

Careful mode (`carefulBelow`): the fewest right answers held back, in steps of half a point, at which the folds name at
most --careful (25 %) of the held-out breeds' photos confidently; its threshold is set on the final model at that share.

Views (issue 70): where unknown_breeds.py was given views of the photos (--views), the rule is fitted, standardised
and thresholded on the originals and their views together (--sources: which of them), so that a photo the backbones
never learnt is not "a breed this model does not know" for being new: every Stanford photo is in ImageNet's training
set, and its features sit closer to its breed than an owner's photo's. The table then says each part apart
(originals, views).

Usage: fit_unknown_breed_rule.py SIGNALS.npz [--signals p1,margin,cosine,energy] [--lost 0.05] [--careful 0.25]
         [--unsure-below 0.45] [--unsure-margin 0] [--sources original,cut,…] [--answers ANSWERS.npz] [--out RULE.json]
"""
import argparse, json, re
import numpy as np
from scipy.optimize import minimize

parser = argparse.ArgumentParser()
parser.add_argument("signals", help="unknown_breeds.py --out")
parser.add_argument("--signals", dest="names", default="p1,margin,cosine,energy")
parser.add_argument("--lost", type=float, default=0.05,
                    help="the share of right answers the verdict may hold back (the rule's and unsure together)")
parser.add_argument("--unsure-below", type=float, default=0.45, help="unsure: the top breed's probability under this")
parser.add_argument("--unsure-margin", type=float, default=0.0, help="unsure: the top breed's lead under this")
parser.add_argument("--restored", default=r"^n\d{8}-",
                    help="a regular expression for the class folders of photos in their true proportions")
parser.add_argument("--careful", type=float, default=0.25,
                    help="careful mode: the share of held-out breeds' photos still named confidently it answers at")
parser.add_argument("--answers", help="write each fold's held-out verdicts here (npz), for kind_of_dog.py")
parser.add_argument("--sources", help="the photos fitted on, by source (original, or a view's name; all: every one); "
                                       "all unless set")
parser.add_argument("--out")
args = parser.parse_args()
names = args.names.split(",")
everything = list(np.load(args.signals, allow_pickle=True)["folds"])
for f in everything:
    f.setdefault("source", np.full(len(f["is_known"]), "original"))
    f["fit"] = (np.isin(f["source"], args.sources.split(",")) if args.sources and args.sources != "all"
                else np.ones(len(f["is_known"]), dtype=bool))
sources = sorted({str(v) for f in everything for v in f["source"]}, key=lambda v: (v != "original", v))
parts = {"originals": lambda f: f["source"] == "original"}
if len(sources) > 1:
    parts["views"] = lambda f: f["source"] != "original"
folds = [f for f in everything if (~f["is_known"]).any()]
finals = [f for f in everything if not (~f["is_known"]).any()]
assert len(finals) <= 1, "one model without a held-out list at most"


def raw(f):
    return np.stack([f[n] for n in names], 1).astype(np.float64)


def scale_of(f):
    x = raw(f)[f["is_known"] & f["fit"]]
    return x.mean(0), x.std(0) + 1e-9


def standardised(f):
    mu, sd = scale_of(f)
    return (raw(f) - mu) / sd


def fit(fs):
    xs = np.concatenate([standardised(f)[f["fit"]] for f in fs])
    ys = np.concatenate([f["is_known"][f["fit"]].astype(float) for f in fs])
    wk = np.where(ys == 1, 0.5 / ys.mean(), 0.5 / (1 - ys.mean()))

    def loss(w):
        s = xs @ w[:-1] + w[-1]
        p = 1 / (1 + np.exp(-s))
        v = -(wk * (ys * np.log(p + 1e-12) + (1 - ys) * np.log(1 - p + 1e-12))).mean() + 1e-3 * (w[:-1] ** 2).sum()
        g = xs.T @ (wk * (p - ys)) / len(ys) + 2e-3 * w[:-1]
        return v, np.append(g, (wk * (p - ys)).mean())
    return minimize(loss, np.zeros(len(names) + 1), jac=True).x


def restored_known(f):
    """Known photos restored to their true proportions (their class folders match --restored)."""
    return f["is_known"] & np.array([re.match(args.restored, str(d)) is not None for d in f["folder"]])


def right_answers(f, part=None):
    """Known photos restored to their true proportions whose top breed is right, whatever the verdict: of the photos
    fitted on, or of `part` (a mask)."""
    return restored_known(f) & f["right"] & (f["fit"] if part is None else part)


def unsure(f):
    """The photos answered "unsure" (when no rule says "another breed" first)."""
    return (f["p1"] < args.unsure_below) | (f["margin"] < args.unsure_margin)


def named(f):
    """The photos named confidently without the rule: neither "no dog" nor "unsure"."""
    return ~f["noDog"] & ~unsure(f)


def takeable(f, part=None):
    """The right answers the rule can take: it comes after "no dog", and those answered "unsure" are held back already."""
    return right_answers(f, part) & named(f)


def unsure_right(f, part=None):
    """The right answers "unsure" holds back whatever the rule says."""
    return right_answers(f, part) & ~f["noDog"] & unsure(f)


def threshold(score, f, lost):
    """The highest threshold under which at most `lost` of the right answers would be held back: "unsure", or "a
    breed this model does not know"."""
    scores = np.sort(score[takeable(f)])
    most = int(np.floor(lost * right_answers(f).sum())) - unsure_right(f).sum()
    return scores[most] if 0 <= most < len(scores) else (-np.inf if most < 0 else np.inf)


def taken(score, f, below, part=None):
    """The share of the right answers held back at `below` ("unsure" or the rule's), of those fitted on or of `part`."""
    return np.sum(unsure_right(f, part) | (takeable(f, part) & (score < below))) / right_answers(f, part).sum()


print(f"signals: {', '.join(names)}")
print("folds: " + "; ".join(f"{str(f['model']).split('/')[-1]} (known {f['is_known'].sum()}, unknown {(~f['is_known']).sum()})"
                             for f in folds))
print(f"unsure below {args.unsure_below} or by a lead under {args.unsure_margin}")
print("without the rule, unknown photos named confidently: " + "; ".join(f"{np.mean(named(f)[~f['is_known']]):.1%}" for f in folds))
held_scores = []
for i, f in enumerate(folds):
    w = fit([g for j, g in enumerate(folds) if j != i])
    held_scores.append(standardised(f) @ w[:-1] + w[-1])
print("\n| right answers held back (known photos, restored) | " + " | ".join(f"fold {i + 1}" for i in range(len(folds)))
      + " | all folds | known breeds named wrongly |")
print("|---" * (len(folds) + 3) + "|")


def rows_of(f, part):
    """The photos fitted on, or those of `part` (a function of the fold giving a mask)."""
    return f["fit"] if part is None else part(f)


def still_named(s, f, lost, part=None):
    """Fold `f`'s unknown photos (fitted on, or of `part`) still named confidently when the verdict (the rule's scores
    `s`) holds back `lost` of its right answers (those fitted on)."""
    unknown = ~f["is_known"] & rows_of(f, part)
    return named(f)[unknown] & ~(s < threshold(s, f, lost))[unknown]


def named_over_folds(lost, part=None):
    """Over all folds, each scored by a rule fitted on the others: the share of unknown photos still named
    confidently when the verdict holds back `lost` of each fold's right answers."""
    return (sum(still_named(s, f, lost, part).sum() for s, f in zip(held_scores, folds))
            / sum((~f["is_known"] & rows_of(f, part)).sum() for f in folds))


def wrongly_named_over_folds(lost, part=None):
    """Over all folds: the share of the known breeds' restored photos named confidently as a wrong breed."""
    wrong = total = 0
    for s, f in zip(held_scores, folds):
        known = restored_known(f) & rows_of(f, part)
        wrong += np.sum(known & ~f["right"] & named(f) & ~(s < threshold(s, f, lost)))
        total += known.sum()
    return wrong / total


def held_back_over_folds(lost, part):
    """Over all folds: the share of `part`'s right answers held back where each fold holds back `lost` of those fitted
    on."""
    return (sum(taken(s, f, threshold(s, f, lost), part(f)) * right_answers(f, part(f)).sum() for s, f in zip(held_scores, folds))
            / sum(right_answers(f, part(f)).sum() for f in folds))


for lost in sorted({0.03, 0.04, 0.05, 0.06, 0.08, 0.10, 0.15, args.lost}):
    cells = [f"{still_named(s, f, lost).mean():.1%}" for s, f in zip(held_scores, folds)]
    print(f"| {100 * lost:g}%{' (chosen)' if lost == args.lost else ''} | " + " | ".join(cells) + f" | {named_over_folds(lost):.1%} | {wrongly_named_over_folds(lost):.1%} |")
if len(parts) > 1:
    print("\nEach part apart (the folds' known photos' right answers held back, and held-out breeds' photos named "
          "confidently, each fold thresholded on the photos fitted on):")
    print("| right answers held back (fitted on) | " + " | ".join(f"{n}: held back | {n}: held-out named" for n in parts) + " |")
    print("|---" * (2 * len(parts) + 1) + "|")
    for lost in sorted({0.03, 0.04, 0.05, 0.06, 0.08, 0.10, args.lost}):
        print(f"| {100 * lost:g}% | " + " | ".join(f"{held_back_over_folds(lost, part):.1%} | {named_over_folds(lost, part):.1%}"
                                                   for part in parts.values()) + " |")


# Careful mode: the fewest right answers taken (in steps of half a point) at which the folds name at most
# `--careful` of the held-out breeds' photos confidently.
careful_lost = next((l for l in np.arange(args.lost, 0.5001, 0.005) if named_over_folds(l) <= args.careful), None)
if careful_lost is not None:
    print(f"\ncareful mode: {named_over_folds(careful_lost):.1%} of held-out breeds' photos named confidently "
          f"when {careful_lost:.1%} of the right answers are held back; known breeds named wrongly "
          f"{wrongly_named_over_folds(careful_lost):.1%}")
if args.answers:
    # Per fold, as the table scores it (rule fitted on the other folds): which photos the rule answers "a breed this
    # model does not know", at the chosen share and at the careful one.
    np.savez(args.answers, **{f"other_{i}": s < threshold(s, f, args.lost) for i, (s, f) in enumerate(zip(held_scores, folds))},
             **{f"unsure_{i}": unsure(f) for i, f in enumerate(folds)},
             **({f"careful_{i}": s < threshold(s, f, careful_lost) for i, (s, f) in enumerate(zip(held_scores, folds))}
                if careful_lost is not None else {}))
w = fit(folds)
rule = {"signals": names, "weights": [float(v) for v in w[:-1]], "bias": float(w[-1]),
        "unsureBelow": args.unsure_below, "unsureMargin": args.unsure_margin}
if finals:
    final = finals[0]
    mu, sd = scale_of(final)
    score = standardised(final) @ w[:-1] + w[-1]
    below = threshold(score, final, args.lost)
    rule.update(mean=[float(v) for v in mu], scale=[float(v) for v in sd], below=float(below))
    if careful_lost is not None:
        rule["carefulBelow"] = float(threshold(score, final, careful_lost))
        print(f"careful mode on {str(final['model']).split('/')[-1]}: the verdict holds back "
              f"{taken(score, final, rule['carefulBelow']):.1%} of the right answers at {rule['carefulBelow']:.3f}")
    print(f"\n{str(final['model']).split('/')[-1]}: {final['is_known'].sum()} validation photos, "
          f"{right_answers(final).sum()} restored ones with their top breed right; the verdict holds back "
          f"{taken(score, final, below):.1%} of those at the threshold")
    if len(parts) > 1:
        # The shift (issue 70): each signal's mean over the right answers of the views, in units of its spread over
        # the originals' right answers, from the originals' mean; and the rule's weight on it.
        original, views = right_answers(final, parts["originals"](final)), right_answers(final, parts["views"](final))
        x = raw(final)
        print("\n| signal | originals (right answers) | views | shift, in the originals' spreads | weight |")
        print("|---|---|---|---|---|")
        for i, n in enumerate(names):
            a, b = x[original, i], x[views, i]
            print(f"| {n} | {a.mean():.3f} | {b.mean():.3f} | {(b.mean() - a.mean()) / (a.std() + 1e-9):+.2f} | {w[i]:+.2f} |")
    for name, part in parts.items():
        print(f"  {name}: {taken(score, final, below, part(final)):.1%} of {right_answers(final, part(final)).sum()}"
              + (f" (careful: {taken(score, final, rule['carefulBelow'], part(final)):.1%})" if "carefulBelow" in rule else ""))
print("\nrule:", json.dumps(rule))
if args.out:
    json.dump(rule, open(args.out, "w"), indent=1)
