"""Builds dedog's breed catalogue (JSON): every breed of the FCI nomenclature, plus the Stanford Dogs classes the
FCI does not list (American coonhounds, wild canids).

Inputs: the raw public tables in ../shared/breed-facts (described in its SOURCES.md); classes.tsv, the
hand-checked table saying which row of each raw table belongs to which Stanford class, plus corrected Czech names;
czech-names-fci.tsv, Czech names of further FCI breeds, each with its source; czech-vocabulary.tsv, the Czech words
for every English term the catalogue uses (FCI groups and sections, countries, coat care, shedding, colours,
temperament words, varieties, notes, source titles), each with its source.

Only facts are taken (numbers, names, groups, countries, AKC's three temperament keywords); no prose. Where no
source gives a value, the field is null; a breed with no sourced Czech name has `name.cs` null (shown in its
English name), never a made-up one. Joins beyond classes.tsv are exact: AKC rows by the breed's normalised name,
Wikipedia rows by the FCI number in their infobox ("#186"). The build fails if any English term lacks a Czech one.
"""
import argparse, csv, json, re
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--facts", type=Path, required=True)
parser.add_argument("--classes", type=Path, required=True)
parser.add_argument("--czech-names", type=Path, required=True)
parser.add_argument("--vocabulary", type=Path, required=True)
parser.add_argument("--output", type=Path, required=True)
args = parser.parse_args()

SOURCES = [
    {"id": "fci", "title": "FCI breed nomenclature (scraped from fci.be)", "repository": "paiv/fci-breeds",
     "commit": "f50dd4acaf4228baf8f602935d580842a253952b", "path": "fci-breeds.csv", "licence": "MIT"},
    {"id": "akc", "title": "American Kennel Club breed data (metric)", "repository": "tmfilho/akcdata",
     "commit": "102a19db9d322b09c7dc34a21da8373f3b25d6f3", "path": "data/akc-data-latest.csv",
     "licence": "MIT (data: American Kennel Club)"},
    {"id": "akc-by-sex", "title": "American Kennel Club breed data (imperial, by sex)",
     "repository": "datarobot-community/dogsnap-workshop", "commit": "a9e668ab12433ac6b65b266204ee994d83b8b725",
     "path": "scripts/akc_info.csv", "licence": "Apache-2.0 (data: American Kennel Club)"},
    {"id": "colours", "title": "Dog breeds table (coarse fur colours)", "repository": "Bambee26/datafun-06-projects",
     "commit": "adaf18771291af0b18dd9f446fb5f932637e761c", "path": "dog_breeds.csv", "licence": "none stated"},
    {"id": "wikipedia", "title": "Wikipedia infobox facts", "repository": "scaralfred/CatsPediaApp",
     "commit": "7de552c51553d4d14a239b4c0ea179ca90a76de2", "path": "src/breeds/breeds.js", "licence": "CC BY-SA (Wikipedia)"},
    {"id": "czech", "title": "Czech names (corrected to ČMKU/FCI usage by hand)", "repository": "cervinkamichal0/GuessThePes",
     "commit": "351a29f551805e7b42dafcd7c289f872228d9367",
     "path": "app/src/main/java/com/example/guessthepes/logic/TFLiteModel.java", "licence": "none stated"},
    {"id": "fci-standard", "title": "FCI breed standards: the breed's name in its country of origin",
     "repository": "fci.be", "commit": "", "path": "Nomenclature/Standards (the pdf column of fci-breeds.csv)",
     "licence": "FCI"},
    {"id": "cmku", "title": "ČMKU (Czech kennel union): Czech names of FCI breeds, groups and sections",
     "repository": "cmku.cz", "commit": "", "path": "plemena", "licence": "facts"},
    {"id": "dedog-vocabulary", "title": "dedog's Czech vocabulary of descriptive words (scripts/catalogue/czech-vocabulary.tsv)",
     "repository": "dedog", "commit": "", "path": "scripts/catalogue/czech-vocabulary.tsv", "licence": "as dedog"},
]

FCI_GROUPS = {"Sheepdogs and Cattledogs": 1, "Pinscher and Schnauzer": 2, "Terriers": 3, "Dachshunds": 4,
              "Spitz and primitive types": 5, "Scent hounds and related breeds": 6, "Pointing Dogs": 7,
              "Retrievers": 8, "Companion and Toy Dogs": 9, "Sighthounds": 10}
# Classes that are one variety of an FCI breed (from COVERAGE.md's notes).
FCI_VARIETY = {"papillon": "Papillon", "groenendael": "Groenendael", "malinois": "Malinois", "collie": "Rough",
               "Pomeranian": "Pomeranian (Zwergspitz)", "keeshond": "Keeshond (Wolfspitz)", "toy_poodle": "Toy",
               "miniature_poodle": "Miniature", "standard_poodle": "Standard", "toy_terrier": None}
WILD = {"dingo": "Dingo", "dhole": "Dhole", "African_hunting_dog": "African Wild Dog"}


def title(s):
    small = {"and", "of", "des", "de", "du", "the"}
    words = re.split(r"(\s+|-|\()", s.lower())
    return "".join(w if w in small and i else w[:1].upper() + w[1:] for i, w in enumerate(words))


def number(s):
    try:
        v = float(s)
    except (TypeError, ValueError):
        return None
    return round(v, 1)


def value_range(lo, hi, unit):
    lo, hi = number(lo), number(hi)
    lo, hi = (lo if lo and lo > 0 else None), (hi if hi and hi > 0 else None)  # 0 means "not given" in some rows
    if lo is None and hi is None:
        return None
    lo, hi = lo if lo is not None else hi, hi if hi is not None else lo
    return {"min": min(lo, hi), "max": max(lo, hi), "unit": unit}


SEXED = re.compile(r"^\s*(\d+(?:\.\d+)?)(?:\s*-\s*(\d+(?:\.\d+)?))?\s*(inches|pounds)\s*\(males?\)\s*[,;]\s*"
                   r"(\d+(?:\.\d+)?)(?:\s*-\s*(\d+(?:\.\d+)?))?\s*(inches|pounds)\s*\(females?\)\s*$")


def by_sex(text, unit):
    """'23-24 inches (male), 21.5-22.5 inches (female)' -> metric ranges per sex, or None if not that form."""
    m = SEXED.match(text or "")
    if not m:
        return None
    factor = 2.54 if m.group(3) == "inches" else 0.45359237
    def r(lo, hi):
        lo = float(lo); hi = float(hi) if hi else lo
        return {"min": round(lo * factor, 1), "max": round(hi * factor, 1), "unit": unit}
    return {"male": r(m.group(1), m.group(2)), "female": r(m.group(4), m.group(5))}


def akc_facts(a, ai, note):
    """Height, weight, life span, coat and temperament from an AKC row (metric) and its imperial by-sex row."""
    height = weight = life = coat = temperament = None
    if a:
        height = value_range(a["min_height"], a["max_height"], "cm")
        weight = value_range(a["min_weight"], a["max_weight"], "kg")
        life = value_range(a["min_expectancy"], a["max_expectancy"], "years")
        note("akc", *[k for k, v in (("height", height), ("weight", weight), ("lifeSpan", life)) if v])
    if ai:
        for k, text, unit in (("height", ai["Height"], "cm"), ("weight", ai["Weight"], "kg")):
            sexes = by_sex(text, unit)
            target = height if k == "height" else weight
            if sexes and target:
                target.update(sexes)
                note("akc-by-sex", k)
    if a and (a["grooming_frequency_category"] or a["shedding_category"]):
        coat = {"grooming": a["grooming_frequency_category"] or None, "shedding": a["shedding_category"] or None}
        note("akc", "coat")
    if a and a["temperament"].strip():
        temperament = a["temperament"].strip()
        note("akc", "temperament")
    return height, weight, life, coat, temperament


def with_sexes(*measures):
    for target in measures:
        if target is not None:
            target.setdefault("male", None)
            target.setdefault("female", None)


def size_category(weight, height):
    """By weight midpoint (kg): toy < 5, small < 10, medium < 25, large < 45, giant; else by height (cm)."""
    if weight:
        mid = (weight["min"] + weight["max"]) / 2
        return "toy" if mid < 5 else "small" if mid < 10 else "medium" if mid < 25 else "large" if mid < 45 else "giant"
    if height:
        mid = (height["min"] + height["max"]) / 2
        return "toy" if mid < 25 else "small" if mid < 40 else "medium" if mid < 55 else "large" if mid < 65 else "giant"
    return None


fci = {r["id"]: r for r in csv.DictReader(open(args.facts / "fci-breeds.csv", encoding="utf-8"))}
akc = {}
with open(args.facts / "akc-data-latest.csv", encoding="utf-8") as f:
    for r in csv.DictReader(f):
        akc[r[""]] = r
akc_info = {r["breed"]: r for r in csv.DictReader(open(args.facts / "akc_info.csv", encoding="utf-8"))}
colours = {r["Breed"]: r for r in csv.DictReader(open(args.facts / "dog_breeds.csv", encoding="utf-8")) if r.get("Breed")}
wiki = {b["name"]: b for b in json.load(open(args.facts / "wikipedia-breeds.json", encoding="utf-8"))}

rows = [r for r in csv.DictReader((l for l in open(args.classes, encoding="utf-8") if not l.startswith("#")),
                                  delimiter="\t")]
assert len(rows) == 120, len(rows)
breeds = []
for row in rows:
    cls = row["class"]
    stanford = cls.split("-", 1)[1]
    used = {}
    def note(source, *fields):
        used.setdefault(source, []).extend(f for f in fields if f not in used.get(source, []))

    f = fci.get(row["fci"]) if row["fci"] else None
    a = akc.get(row["akc"]) if row["akc"] else None
    ai = akc_info.get(row["akc"]) if row["akc"] else None
    c = colours.get(row["colour_table"]) if row["colour_table"] else None
    w = wiki.get(row["wikipedia"]) if row["wikipedia"] else None
    assert not row["fci"] or f, (cls, row["fci"])
    assert not row["akc"] or a, (cls, row["akc"])

    english = row["akc"] or (title(f["name"]) if f else None) or WILD.get(stanford) or stanford.replace("_", " ")
    english = re.sub(r"^Poodle \((\w+)\)$", r"\1 Poodle", english)
    if stanford == "toy_terrier":
        english = "English Toy Terrier"  # the FCI breed this ImageNet synset is closest to (COVERAGE.md)
    aliases_en = []
    for candidate in [stanford.replace("_", " "), title(f["name"]) if f else None, row["akc"], row["wikipedia"]]:
        if candidate and candidate.lower() != english.lower() and candidate.lower() not in [x.lower() for x in aliases_en]:
            aliases_en.append(candidate)

    fci_entry, fci_note = None, None
    if f:
        fci_entry = {"number": int(f["id"]), "group": FCI_GROUPS[f["group"]], "groupName": f["group"],
                     "section": f["section"] or None, "provisional": bool(f["provisional"].strip()),
                     "variety": FCI_VARIETY.get(stanford)}
        note("fci", "fci")
    elif stanford in WILD:
        fci_note = "a wild canid, not a domestic breed"
    else:
        fci_note = "not recognised by the FCI (an American coonhound breed)"

    origin = title(f["country"]) if f else (w["origin"] if w and w.get("origin") else None)
    if f:
        note("fci", "origin")
    elif origin:
        note("wikipedia", "origin")

    height, weight, life, coat, temperament = akc_facts(a, ai, note)
    with_sexes(height, weight)
    colour_list = []
    if c:
        for k in ("Main_Fur_Color", "2nd_Fur_Color", "3rd_Fur_Color", "4th_Fur_Color"):
            v = (c.get(k) or "").strip().lower()
            if v and v not in ("&", "and") and v not in colour_list:
                colour_list.append(v)
        if colour_list:
            note("colours", "colours")

    note("czech", "name.cs")
    breeds.append({
        "id": re.sub(r"[^a-z0-9]+", "-", english.lower()).strip("-"),
        "labels": [cls],
        "name": {"en": english, "cs": row["name_cs"]},
        "aliases": {"en": aliases_en, "cs": [x.strip() for x in row["aliases_cs"].split(",") if x.strip()]},
        "fci": fci_entry,
        "fciNote": fci_note,
        "origin": origin,
        "size": size_category(weight, height),
        "height": height,
        "weight": weight,
        "lifeSpan": life,
        "coat": coat,
        "colours": colour_list,
        "temperament": temperament,
        "sources": [{"source": s, "fields": fs} for s, fs in used.items()],
    })


# ---------------------------------------------------------------- every other FCI breed
used_fci = {int(r["fci"]) for r in rows if r["fci"]}
czech_extra = {}
for line in open(args.czech_names, encoding="utf-8"):
    if line.startswith("#") or not line.strip():
        continue
    fci_id, name_cs, source = line.rstrip("\n").split("\t")
    czech_extra[int(fci_id)] = (name_cs, source)


def key(name):
    return re.sub(r"[^a-z0-9]+", " ", name.lower()).strip()


akc_by_key = {key(n): n for n in akc}
wiki_by_fci = {}
for w in wiki.values():
    m = re.search(r"#\s*(\d+)", (w.get("federationsAndClubs") or {}).get("federationCynologiqueInternationale") or "")
    if m:
        wiki_by_fci.setdefault(int(m.group(1)), w)


def life_from_text(text):
    m = re.search(r"(\d+(?:\.\d+)?)\s*(?:to|-|–)\s*(\d+(?:\.\d+)?)", text or "")
    return value_range(m.group(1), m.group(2), "years") if m else None


for fci_id, f in sorted(fci.items(), key=lambda kv: int(kv[0])):
    fci_number = int(fci_id)
    if fci_number in used_fci:
        continue
    used = {}
    def note(source, *fields):
        used.setdefault(source, []).extend(x for x in fields if x not in used.get(source, []))
    english = title(f["name"])
    w = wiki_by_fci.get(fci_number)
    a_name = akc_by_key.get(key(english)) or (akc_by_key.get(key(w["name"])) if w else None)
    a = akc.get(a_name) if a_name else None
    ai = akc_info.get(a_name) if a_name else None
    aliases_en = [n for n in [w["name"] if w else None, a_name] if n and key(n) != key(english)]
    aliases_en = list(dict.fromkeys(aliases_en))
    note("fci", "fci", "origin")
    height, weight, life, coat, temperament = akc_facts(a, ai if a else None, note)
    if w:
        wiki_fields = []
        if height is None and w.get("heightRange"):
            height = value_range(w["heightRange"].get("min"), w["heightRange"].get("max"), "cm")
            wiki_fields.append("height")
        if weight is None and w.get("weightRange"):
            weight = value_range(w["weightRange"].get("min"), w["weightRange"].get("max"), "kg")
            wiki_fields.append("weight")
        if life is None:
            life = life_from_text(w.get("lifeSpan"))
            if life:
                wiki_fields.append("lifeSpan")
        if wiki_fields:
            note("wikipedia", *wiki_fields)
    with_sexes(height, weight)
    name_cs = None
    if fci_number in czech_extra:
        name_cs, source = czech_extra[fci_number]
        note(source, "name.cs")
    slug = re.sub(r"[^a-z0-9]+", "-", english.lower()).strip("-")
    breeds.append({
        "id": slug,
        "labels": [],
        "name": {"en": english, "cs": name_cs},
        "aliases": {"en": aliases_en, "cs": []},
        "fci": {"number": fci_number, "group": FCI_GROUPS[f["group"]], "groupName": f["group"],
                "section": f["section"] or None, "provisional": bool(f["provisional"].strip()), "variety": None},
        "fciNote": None,
        "origin": title(f["country"]),
        "size": size_category(weight, height),
        "height": height,
        "weight": weight,
        "lifeSpan": life,
        "coat": coat,
        "colours": [],
        "temperament": temperament,
        "sources": [{"source": s_, "fields": fs} for s_, fs in used.items()],
    })

# ---------------------------------------------------------------- shared shape for every breed
for b in breeds:
    b["bundledModel"] = bool(b["labels"])  # the bundled models' labels are the Stanford classes
    b["temperament"] = [w.strip() for w in b["temperament"].split(",")] if b["temperament"] else []

# ---------------------------------------------------------------- Czech vocabulary: every English term used
vocabulary, vocabulary_sources = {}, {}
for line in open(args.vocabulary, encoding="utf-8"):
    if line.startswith("#") or not line.strip():
        continue
    kind, english, czech, source = line.rstrip("\n").split("\t")
    vocabulary[english] = czech
    vocabulary_sources[source] = True
terms = {}
for b in breeds:
    f = b["fci"]
    if f:
        terms.setdefault(f["groupName"], "FCI group")
        if f["section"]:
            terms.setdefault(f["section"], "FCI section")
        if f["variety"]:
            terms.setdefault(f["variety"], "variety")
    if b["fciNote"]:
        terms.setdefault(b["fciNote"], "note")
    for country in (b["origin"] or "").split(", "):
        if country:
            terms.setdefault(country, "country")
    if b["coat"]:
        for k in ("grooming", "shedding"):
            if b["coat"][k]:
                terms.setdefault(b["coat"][k], k)
    for c in b["colours"]:
        terms.setdefault(c, "colour")
    for t in b["temperament"]:
        terms.setdefault(t, "temperament")
for source in SOURCES:
    terms.setdefault(source["title"], "source")
missing = sorted((kind, term) for term, kind in terms.items() if term not in vocabulary)
if missing:
    raise SystemExit("czech-vocabulary.tsv lacks:\n" + "\n".join(f"{k}\t{t}" for k, t in missing))
unused = sorted(set(vocabulary) - set(terms))

ids = [b["id"] for b in breeds]
assert len(set(ids)) == len(ids), [i for i in ids if ids.count(i) > 1]
args.output.parent.mkdir(parents=True, exist_ok=True)
args.output.write_text(json.dumps({"formatVersion": 2, "sources": SOURCES,
                                   "vocabulary": {"cs": {t: vocabulary[t] for t in sorted(terms)}},
                                   "breeds": breeds}, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
recognised = sum(b["bundledModel"] for b in breeds)
with_cs = sum(b["name"]["cs"] is not None for b in breeds)
print(f"wrote {len(breeds)} breeds ({recognised} recognised by the bundled models, {with_cs} with a Czech name) "
      f"and {len(terms)} Czech terms to {args.output}" + (f"; unused vocabulary: {unused}" if unused else ""))
