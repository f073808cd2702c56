"""Builds dedog's breed catalogue (JSON): every breed of the FCI nomenclature, the breeds the Czech kennel union
(ČMKU) lists beyond it, the Stanford Dogs classes neither lists (American coonhounds, wild canids), and the breeds
and crosses of more-breeds-224 (American Pit Bull Terrier, Labradoodle, Cockapoo).

Inputs: the raw public tables in ../shared/breed-facts (described in its SOURCES.md); classes.tsv, the hand-checked
table saying which row of each raw table belongs to which Stanford class, with the Czech names dedog used before
ČMKU's list was found (kept as aliases); czech-names-fci.tsv, Czech names of the Czech and Slovak national breeds
from their standards; crosses.tsv, the crosses and their parent breeds; czech-vocabulary.tsv, the Czech words for
every English term the catalogue uses (FCI groups and sections, countries, coat care, shedding, colours,
temperament words, varieties, notes, source titles), each with its source.

Czech names: ČMKU's official form (cmku-breeds.csv, joined by FCI number, never by name; its 9xx codes name breeds
the FCI does not list and are never taken for FCI numbers), written as running text (see `running_text`), in full
where ČMKU's database cuts it short (atlas-breeds.json). The everyday forms people use and the varieties
(jezevčík trpasličí…) are Czech aliases, each from a source. A breed no source names in Czech has `name.cs` null.

Only facts are taken (numbers, names, groups, countries, AKC's three temperament keywords); no prose. Where no
source gives a value, the field is null. Joins beyond classes.tsv are exact: AKC rows by the breed's normalised
name, Wikipedia rows by the FCI number in their infobox ("#186") or by name. The build fails if any English term
lacks a Czech one. The report says how many breeds have a Czech name and which FCI breeds still lack one.
"""
import argparse, csv, json, re, unicodedata
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--facts", type=Path, required=True)
parser.add_argument("--classes", type=Path, required=True)
parser.add_argument("--czech-names", type=Path, required=True)
parser.add_argument("--crosses", type=Path, required=True)
parser.add_argument("--more-classes", type=Path, required=True)
parser.add_argument("--vocabulary", type=Path, required=True)
parser.add_argument("--akc-names", type=Path, required=True)
parser.add_argument("--fci-names", type=Path, required=True, help="fci-names-de-fr-es.tsv: the FCI's names in German, French and Spanish")
parser.add_argument("--other-names", type=Path, required=True,
                    help="other-names.tsv: nicknames and other names from the sources' descriptions of a breed")
parser.add_argument("--output", type=Path, required=True)
args = parser.parse_args()

ATLAS = {"repository": "sandovabarbora/atlas-plemen-fci", "commit": "308b7715cb5ca8ff733af2c5553f34d25d0ea77f"}
SOURCES = [
    {"id": "fci", "title": "FCI breed nomenclature (scraped from fci.be)", "repository": "paiv/fci-breeds",
     "commit": "f50dd4acaf4228baf8f602935d580842a253952b", "path": "fci-breeds.csv", "licence": "MIT"},
    {"id": "akc", "title": "American Kennel Club breed data (metric)", "repository": "tmfilho/akcdata",
     "commit": "102a19db9d322b09c7dc34a21da8373f3b25d6f3", "path": "data/akc-data-latest.csv",
     "licence": "MIT (data: American Kennel Club)"},
    {"id": "fci-languages", "title": "FCI breed nomenclature in German, French and Spanish (scraped from fci.be)",
     "repository": "paiv/fci-breeds", "commit": "f50dd4acaf4228baf8f602935d580842a253952b",
     "path": "fci-breeds-de.csv, fci-breeds-fr.csv, fci-breeds-es.csv", "licence": "MIT"},
    {"id": "akc-by-sex", "title": "American Kennel Club breed data (imperial, by sex)",
     "repository": "datarobot-community/dogsnap-workshop", "commit": "a9e668ab12433ac6b65b266204ee994d83b8b725",
     "path": "scripts/akc_info.csv", "licence": "Apache-2.0 (data: American Kennel Club)"},
    {"id": "colours", "title": "Dog breeds table (coarse fur colours)", "repository": "Bambee26/datafun-06-projects",
     "commit": "adaf18771291af0b18dd9f446fb5f932637e761c", "path": "dog_breeds.csv", "licence": "none stated"},
    {"id": "wikipedia", "title": "Wikipedia infobox facts", "repository": "scaralfred/CatsPediaApp",
     "commit": "7de552c51553d4d14a239b4c0ea179ca90a76de2", "path": "src/breeds/breeds.js", "licence": "CC BY-SA (Wikipedia)"},
    {"id": "other-names", "title": "Nicknames and other names, as the breed's Wikipedia lead sentence or AKC description "
     "says them", "repository": "scaralfred/CatsPediaApp, tmfilho/akcdata",
     "commit": "7de552c51553d4d14a239b4c0ea179ca90a76de2, 102a19db9d322b09c7dc34a21da8373f3b25d6f3",
     "path": "src/breeds/breeds.js (description), data/akc-data-latest.csv (description)",
     "licence": "names are facts (Wikipedia CC BY-SA; AKC)"},
    {"id": "other-names-web", "title": "Nicknames no table gives, as a public web page says them (each page and its "
     "words in scripts/catalogue/other-names.tsv)", "repository": "the web", "commit": "",
     "path": "scripts/catalogue/other-names.tsv (rows of source web)", "licence": "names are facts"},
    {"id": "czech", "title": "Czech names (corrected to ČMKU/FCI usage by hand)", "repository": "cervinkamichal0/GuessThePes",
     "commit": "351a29f551805e7b42dafcd7c289f872228d9367",
     "path": "app/src/main/java/com/example/guessthepes/logic/TFLiteModel.java", "licence": "none stated"},
    {"id": "fci-standard", "title": "FCI breed standards: the breed's name in its country of origin",
     "repository": "fci.be", "commit": "", "path": "Nomenclature/Standards (the pdf column of fci-breeds.csv)",
     "licence": "FCI"},
    {"id": "cmku", "title": "ČMKU (Czech kennel union): Czech names of FCI breeds, groups and sections",
     "repository": "cmku.cz", "commit": "", "path": "plemena", "licence": "facts"},
    {"id": "cmku-list", "title": "ČMKU's list of breeds with their official Czech names (cmku.cz/cz/seznam-plemen-159)",
     "path": "data/external/cmku-breeds.csv", "licence": "names: ČMKU (facts); code MIT", **ATLAS},
    {"id": "atlas", "title": "Czech atlas of FCI breeds: full names, varieties and everyday forms",
     "path": "data/breeds.json, data/cs_overrides.csv", "licence": "MIT (names: ČMKU)", **ATLAS},
    {"id": "more-breeds", "title": "The 70 Dog Breeds image data set (Kaggle): its crosses and their parent breeds",
     "repository": "Andrej-Ilin/course_zoomcamp_2022", "commit": "785ec410289d909298e8c72fbe7c0059e25f4649",
     "path": "capstone1/archive", "licence": "none stated"},
    {"id": "dedog-vocabulary", "title": "dedog's Czech vocabulary of descriptive words (scripts/catalogue/czech-vocabulary.tsv)",
     "repository": "dedog", "commit": "", "path": "scripts/catalogue/czech-vocabulary.tsv", "licence": "as dedog"},
]

FCI_GROUPS = {"Sheepdogs and Cattledogs": 1, "Pinscher and Schnauzer": 2, "Terriers": 3, "Dachshunds": 4,
              "Spitz and primitive types": 5, "Scent hounds and related breeds": 6, "Pointing Dogs": 7,
              "Retrievers": 8, "Companion and Toy Dogs": 9, "Sighthounds": 10}
# The groups' names in full, as the FCI's nomenclature (fci.be/en/Nomenclature) writes them, where the scraped table
# gives them short: "Pinscher and Schnauzer" would name the Bernese Mountain Dog's and the mastiffs' group, and
# "Retrievers" is also the name of group 8's first section (the spaniels are its second).
FCI_GROUP_NAMES = {"Sheepdogs and Cattledogs": "Sheepdogs and Cattledogs (except Swiss Cattledogs)",
                   "Pinscher and Schnauzer": "Pinscher and Schnauzer - Molossoid and Swiss Mountain and Cattledogs",
                   "Retrievers": "Retrievers - Flushing Dogs - Water Dogs"}
# Classes that are one variety of an FCI breed (from COVERAGE.md's notes).
FCI_VARIETY = {"papillon": "Papillon", "groenendael": "Groenendael", "malinois": "Malinois", "collie": "Rough",
               "Pomeranian": "Pomeranian (Zwergspitz)", "keeshond": "Keeshond (Wolfspitz)", "toy_poodle": "Toy",
               "miniature_poodle": "Miniature", "standard_poodle": "Standard", "toy_terrier": None}
WILD = {"dingo": "Dingo", "dhole": "Dhole", "African_hunting_dog": "African Wild Dog"}

# FCI breeds the catalogue lists variety by variety (the Stanford classes split them so): every variety has an entry,
# named in Czech by its ČMKU row (or, where ČMKU lists the breed once, by the atlas's variety entry); the breed's own
# ČMKU name is an alias of each. Per variety: the variety as `fci.variety` says it, its ČMKU row, the atlas entries
# that are this variety, and for varieties no Stanford class covers, the new entry's English name and AKC row.
SPLIT = {
    15: [("Groenendael", "Belgický ovčák - Groenendael", ["breed_005"], None, None),
         ("Malinois", "Belgický ovčák - Malinois", ["breed_007"], None, None),
         ("Tervueren", "Belgický ovčák - Tervueren", ["breed_008"], "Belgian Tervuren", "Belgian Tervuren"),
         ("Laekenois", "Belgický ovčák - Laekenois", ["breed_006"], "Belgian Laekenois", "Belgian Laekenois")],
    97: [("Pomeranian (Zwergspitz)", "Německý špic trpasličí", ["breed_172"], None, None),
         ("Keeshond (Wolfspitz)", "Německý špic vlčí", ["breed_163"], None, None),
         ("Grossspitz", "Německý špic velký", ["breed_164", "breed_165"], "Giant German Spitz", None),
         ("Mittelspitz", "Německý špic střední", ["breed_166", "breed_167", "breed_168"], "Medium German Spitz", None),
         ("Kleinspitz", "Německý špic malý", ["breed_169", "breed_170", "breed_171"], "Miniature German Spitz", None)],
    77: [("Papillon", "Papillon", ["breed_350"], None, None),
         ("Phalène", "Phaléne", ["breed_351"], "Phalène", None)],
    172: [("Toy", None, ["breed_362"], None, None), ("Miniature", None, ["breed_361"], None, None),
          ("Medium", None, ["breed_360"], "Medium Poodle", None), ("Standard", None, ["breed_359"], None, None)],
}
# English names of the German Spitz varieties as the FCI standard gives them in German, for search.
SPLIT_ALIASES_EN = {"Grossspitz": ["Grossspitz"], "Mittelspitz": ["Mittelspitz"], "Kleinspitz": ["Kleinspitz"]}


def title(s):
    small = {"and", "of", "des", "de", "du", "the"}
    words = re.split(r"(\s+|-|\()", " ".join(s.lower().split()))
    return "".join(w if w in small and i else w[:1].upper() + w[1:] for i, w in enumerate(words))


def title_foreign(s):
    """`title` for the FCI's French and Spanish names too, whose elisions keep their small word: "Berger d'Asie
    Centrale", "Chien d'Artois"."""
    small = {"and", "of", "des", "de", "du", "the", "d", "l", "la", "le", "les", "del", "los", "las", "el", "y", "et", "van", "von"}
    words = re.split(r"(\s+|-|\(|')", " ".join(s.lower().split()))
    return "".join(w if w in small and i else w[:1].upper() + w[1:] for i, w in enumerate(words))


def key(name):
    """A name as dedog's search compares it (TextKey in Search.swift): no diacritics, lower case, single spaces."""
    stripped = "".join(c for c in unicodedata.normalize("NFD", name) if not unicodedata.combining(c))
    return " ".join(re.findall(r"[^\W_]+", stripped.lower()))


def slug(english, stable=False):
    """The breed's id: its English name in lower case, words joined by hyphens. Ids are stable (models, links and
    the API name breeds by them): entries that existed before diacritics were folded (`stable`) keep the ids they
    had, in which a letter with a diacritic split the word ("sm-landsst-vare")."""
    if stable:
        return re.sub(r"[^a-z0-9]+", "-", english.lower()).strip("-")
    return re.sub(r"[^a-z0-9]+", "-", key(english)).strip("-")


CZECH_ADJECTIVE = re.compile(r"(ský|cký|ská|cká|ní|ý|á)$")


def running_text(name):
    """ČMKU's list writes every name with a capital, as list items are; dedog writes breed names as Czech running
    text does (COVERAGE.md): lower case, apart from proper names. The capital stays where the first word is a
    possessive of a person's name (Hamiltonův honič) or the name is a foreign one written in capitals (Jack Russell
    Teriér, Chesapeake Bay Retriever); a Czech adjective or noun before such a name is lowered (kavalír King
    Charles španěl, australský Silky terier)."""
    first = name.split()[0]
    if first.endswith("ův"):
        return name
    later = re.findall(r"[^\W\d_]+", name)[1:]
    if any(w[0].isupper() for w in later) and not CZECH_ADJECTIVE.search(first) and first != "Kavalír":
        return name
    return name[0].lower() + name[1:]


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


# "65-80 pounds (male), females are about 15 pounds less than male" (the Boxer's row): the metric table read the 15
# as the females' weight.
SEXED_LESS = re.compile(r"^\s*(\d+(?:\.\d+)?)(?:\s*-\s*(\d+(?:\.\d+)?))?\s*(inches|pounds)\s*\(males?\)\s*[,;]\s*"
                        r"females are (?:about )?(\d+(?:\.\d+)?)\s*(?:inches|pounds) less than males?\s*$")


def by_sex(text, unit):
    """'23-24 inches (male), 21.5-22.5 inches (female)' or '65-80 pounds (male), females are about 15 pounds less
    than male' -> metric ranges per sex, or None if not that form."""
    m = SEXED.match(text or "") or SEXED_LESS.match(text or "")
    if not m:
        return None
    factor = 2.54 if m.group(3) == "inches" else 0.45359237
    def r(lo, hi, less=0.0):
        lo = float(lo); hi = float(hi) if hi else lo
        return {"min": round((lo - less) * factor, 1), "max": round((hi - less) * factor, 1), "unit": unit}
    male = r(m.group(1), m.group(2))
    if m.re is SEXED_LESS:
        return {"male": male, "female": r(m.group(1), m.group(2), float(m.group(4)))}
    return {"male": male, "female": r(m.group(4), m.group(5))}


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
                # Where the metric row disagrees with the sexes' ranges by more than a unit at either end, it misread
                # the text they come from (the Boxer's females as 6.8 kg): the range is theirs.
                lo = min(sexes["male"]["min"], sexes["female"]["min"])
                hi = max(sexes["male"]["max"], sexes["female"]["max"])
                if abs(target["min"] - lo) > 1 or abs(target["max"] - hi) > 1:
                    target["min"], target["max"] = lo, hi
                note("akc-by-sex", k)
    if a and (a["grooming_frequency_category"] or a["shedding_category"]):
        coat = {"grooming": a["grooming_frequency_category"] or None, "shedding": a["shedding_category"] or None}
        note("akc", "coat")
    if a and a["temperament"].strip():
        temperament = a["temperament"].strip()
        note("akc", "temperament")
    return height, weight, life, coat, temperament


def life_from_text(text):
    m = re.search(r"(\d+(?:\.\d+)?)\s*(?:to|-|–)\s*(\d+(?:\.\d+)?)", text or "")
    return value_range(m.group(1), m.group(2), "years") if m else None


def wikipedia_facts(w, height, weight, life, note):
    """Height, weight and life span from a Wikipedia row, where the AKC gave none."""
    fields = []
    if height is None and w.get("heightRange"):
        height = value_range(w["heightRange"].get("min"), w["heightRange"].get("max"), "cm")
        fields += ["height"] if height else []
    if weight is None and w.get("weightRange"):
        weight = value_range(w["weightRange"].get("min"), w["weightRange"].get("max"), "kg")
        fields += ["weight"] if weight else []
    if life is None:
        life = life_from_text(w.get("lifeSpan"))
        fields += ["lifeSpan"] if life else []
    if fields:
        note("wikipedia", *fields)
    return height, weight, life


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


def name_rows(path):
    """The tab-separated rows of a names table beside this script, without its # comments and blank lines."""
    for line in open(path, encoding="utf-8"):
        if not line.startswith("#") and line.strip():
            yield line.rstrip("\n").split("\t")


def table(path, delimiter=","):
    with open(path, encoding="utf-8") as f:
        return list(csv.DictReader((l for l in f if not l.startswith("#")), delimiter=delimiter))


fci = {r["id"]: r for r in table(args.facts / "fci-breeds.csv")}
akc = {r[""]: r for r in table(args.facts / "akc-data-latest.csv")}
akc_info = {r["breed"]: r for r in table(args.facts / "akc_info.csv")}
colours = {r["Breed"]: r for r in table(args.facts / "dog_breeds.csv") if r.get("Breed")}
wiki_rows = json.load(open(args.facts / "wikipedia-breeds.json", encoding="utf-8"))
wiki = {b["name"]: b for b in wiki_rows}
cmku = table(args.facts / "cmku-breeds.csv")
atlas = {b["id"]: b for b in json.load(open(args.facts / "atlas-breeds.json", encoding="utf-8"))["breeds"]}
for r in table(args.facts / "atlas-cs-overrides.csv"):
    atlas[r["id"]]["cs"] = r["cs_corrected"]
akc_by_key = {key(n): n for n in akc}
wiki_by_fci = {}
for w in wiki_rows:
    m = re.search(r"#\s*(\d+)", (w.get("federationsAndClubs") or {}).get("federationCynologiqueInternationale") or "")
    if m:
        wiki_by_fci.setdefault(int(m.group(1)), w)

breeds = []
# Per breed id: the Czech names dedog had before ČMKU's list (classes.tsv, czech-names-fci.tsv), with their source.
earlier_czech = {}


def entry(english, *, labels=(), aliases_en=(), fci_row=None, variety=None, fci_note=None, origin=None, a=None,
          ai=None, w=None, c=None, used=None, cross=None, stable=False):
    """One catalogue entry from the rows that describe it (any may be None); `used` already holds what the caller
    took from a source."""
    used = used if used is not None else {}
    def note(source, *fields):
        used.setdefault(source, []).extend(x for x in fields if x not in used.get(source, []))
    if fci_row:
        note("fci", "fci", "origin")
        origin = title(fci_row["country"])
    height, weight, life, coat, temperament = akc_facts(a, ai, note)
    if w:
        height, weight, life = wikipedia_facts(w, height, weight, life, note)
    with_sexes(height, weight)
    colour_list = []
    for k in ("Main_Fur_Color", "2nd_Fur_Color", "3rd_Fur_Color", "4th_Fur_Color"):
        v = ((c or {}).get(k) or "").strip().lower()
        if v and v not in ("&", "and") and v not in colour_list:
            colour_list.append(v)
    if colour_list:
        note("colours", "colours")
    aliases = []
    for candidate in aliases_en:
        if candidate and key(candidate) != key(english) and key(candidate) not in map(key, aliases):
            aliases.append(candidate)
    b = {
        "id": slug(english, stable),
        "labels": list(labels),
        "name": {"en": english, "cs": None},
        "aliases": {"en": aliases, "cs": [], "fci": []},
        "fci": {"number": int(fci_row["id"]), "group": FCI_GROUPS[fci_row["group"]],
                "groupName": FCI_GROUP_NAMES.get(fci_row["group"], fci_row["group"]),
                "section": fci_row["section"] or None, "provisional": bool(fci_row["provisional"].strip()),
                "variety": variety} if fci_row else None,
        "fciNote": fci_note,
        "origin": origin,
        "size": size_category(weight, height),
        "height": height,
        "weight": weight,
        "lifeSpan": life,
        "coat": coat,
        "colours": colour_list,
        "temperament": temperament,
        "cross": cross,
        "sources": used,
    }
    breeds.append(b)
    return b


# ---------------------------------------------------------------- the Stanford Dogs classes
rows = table(args.classes, delimiter="\t")
assert len(rows) == 120, len(rows)
for row in rows:
    cls = row["class"]
    stanford = cls.split("-", 1)[1]
    f = fci.get(row["fci"]) if row["fci"] else None
    a = akc.get(row["akc"]) if row["akc"] else None
    w = wiki.get(row["wikipedia"]) if row["wikipedia"] else None
    assert not row["fci"] or f, (cls, row["fci"])
    assert not row["akc"] or a, (cls, row["akc"])
    english = row["akc"] or (title(f["name"]) if f else None) or WILD.get(stanford) or stanford.replace("_", " ")
    english = re.sub(r"^Poodle \((\w+)\)$", r"\1 Poodle", english)
    if stanford == "toy_terrier":
        english = "English Toy Terrier"  # the FCI breed this ImageNet synset is closest to (COVERAGE.md)
    fci_note = None
    if not f:
        fci_note = "a wild canid, not a domestic breed" if stanford in WILD else \
            "not recognised by the FCI (an American coonhound breed)"
    used = {}
    b = entry(english, labels=[cls], fci_row=f, variety=FCI_VARIETY.get(stanford) if f else None, fci_note=fci_note,
              origin=None if f else (w["origin"] if w and w.get("origin") else None), a=a,
              ai=akc_info.get(row["akc"]) if row["akc"] else None, w=None,
              c=colours.get(row["colour_table"]) if row["colour_table"] else None, used=used,
              aliases_en=[stanford.replace("_", " "), title(f["name"]) if f else None, row["akc"], row["wikipedia"]],
              stable=True)
    if not f and b["origin"]:
        used.setdefault("wikipedia", []).append("origin")
    earlier_czech[b["id"]] = [(row["name_cs"], "czech")] + \
        [(x.strip(), "czech") for x in row["aliases_cs"].split(",") if x.strip()]

# ---------------------------------------------------------------- every other FCI breed
used_fci = {int(r["fci"]) for r in rows if r["fci"]}
for line in open(args.czech_names, encoding="utf-8"):
    if line.startswith("#") or not line.strip():
        continue
    fci_id, name_cs, source = line.rstrip("\n").split("\t")
    earlier_czech[("fci", int(fci_id))] = [(name_cs, source)]


def akc_row(english, w):
    name = akc_by_key.get(key(english)) or (akc_by_key.get(key(w["name"])) if w else None)
    return name, akc.get(name) if name else None, akc_info.get(name) if name else None


for fci_id, f in sorted(fci.items(), key=lambda kv: int(kv[0])):
    fci_number = int(fci_id)
    if fci_number in used_fci:
        continue
    english = title(f["name"])
    w = wiki_by_fci.get(fci_number)
    a_name, a, ai = akc_row(english, w)
    b = entry(english, fci_row=f, a=a, ai=ai if a else None, w=w, aliases_en=[w["name"] if w else None, a_name],
              stable=True)
    if ("fci", fci_number) in earlier_czech:
        earlier_czech[b["id"]] = earlier_czech.pop(("fci", fci_number))

# ---------------------------------------------------------------- varieties no Stanford class covers
for fci_number, varieties in SPLIT.items():
    for variety, _, _, english, akc_name in varieties:
        if not english:
            continue
        a = akc.get(akc_name) if akc_name else None
        entry(english, fci_row=fci[str(fci_number)], variety=variety, a=a, ai=akc_info.get(akc_name) if a else None,
              aliases_en=SPLIT_ALIASES_EN.get(variety, []))

# ---------------------------------------------------------------- breeds ČMKU recognises and the FCI does not
# ČMKU lists them under its own 9xx codes, which are not FCI numbers: no `fci` entry, a note instead.
have = {key(b["name"]["en"]) for b in breeds} | {key(x) for b in breeds for x in b["aliases"]["en"]}
cmku_only = {}
for r in cmku:
    if int(r["fci_number"]) >= 900:
        english = re.sub(r"\s+-\s+LHW$", "", r["en"])  # ČMKU's "Silken Windsprite - LHW" (long-haired whippet)
        a_name = akc_by_key.get(key(english))
        english = a_name or english
        if key(english) in have:
            cmku_only[int(r["fci_number"])] = next(b for b in breeds if key(b["name"]["en"]) == key(english))
            continue
        w = wiki.get(english)
        b = entry(english, fci_note="recognised by the Czech kennel union (ČMKU), not by the FCI", a=akc.get(a_name),
                  ai=akc_info.get(a_name), w=w, origin=w["origin"] if w and w.get("origin") else None)
        if b["origin"]:
            b["sources"].setdefault("wikipedia", []).append("origin")
        cmku_only[int(r["fci_number"])] = b

# ---------------------------------------------------------------- the other breeds of more-breeds-224
for english in ["American Pit Bull Terrier"]:
    w = wiki[english]
    b = entry(english, fci_note="not recognised by the FCI", w=w, origin=w["origin"])
    b["sources"].setdefault("wikipedia", []).append("origin")

# ---------------------------------------------------------------- breeds the AKC recognises and the FCI does not
# (issue 72: the Boykin Spaniel could be taught only as a new breed). Every AKC breed that is no catalogue breed by
# name and has no row in akc-names.tsv (which joins the AKC's names to the FCI's breeds): the AKC's facts, Wikipedia's
# origin; no Czech table names them, so their Czech pages use the English name.
have = {key(b["name"]["en"]) for b in breeds} | {key(x) for b in breeds for x in b["aliases"]["en"]}
joined = {key(name) for name, _ in name_rows(args.akc_names)}
for a_name in sorted(akc):
    if key(a_name) in have or key(a_name) in joined:
        continue
    w = wiki.get(a_name)
    b = entry(a_name, fci_note="recognised by the American Kennel Club, not by the FCI", a=akc[a_name],
              ai=akc_info.get(a_name), w=w, origin=w["origin"] if w and w.get("origin") else None)
    if b["origin"]:
        b["sources"].setdefault("wikipedia", []).append("origin")

# ---------------------------------------------------------------- crosses
by_id = {b["id"]: b for b in breeds}
crosses = {}
for r in table(args.crosses, delimiter="\t"):
    ids = [x.strip() for x in r["parent_ids"].split(",")]
    assert all(i in by_id for i in ids), (r["id"], ids)
    crosses.setdefault(r["en"], []).append(({"name": {"en": r["parent_en"], "cs": r["parent_cs"] or None}, "breeds": ids},
                                            r["source"], r["parent_cs_source"]))
for english, parents in crosses.items():
    used = {}
    for _, source, cs_source in parents:
        used.setdefault(source, []).append("cross") if "cross" not in used.get(source, []) else None
        if cs_source:
            used.setdefault(cs_source, []).append("cross.cs") if "cross.cs" not in used.get(cs_source, []) else None
    entry(english, fci_note="a cross of two breeds, not a breed", used=used,
          cross={"parents": [p for p, _, _ in parents]})

by_id = {b["id"]: b for b in breeds}
assert len(by_id) == len(breeds), [b["id"] for b in breeds if sum(x["id"] == b["id"] for x in breeds) > 1]

# ---------------------------------------------------------------- Czech names and aliases
names = {}    # id -> (name, [sources])
aliases = {}  # id -> [(alias, source)]


def alias(breed_id, name, source):
    aliases.setdefault(breed_id, []).append((name, source))


by_number = {}
for b in breeds:
    if b["fci"]:
        by_number.setdefault(b["fci"]["number"], []).append(b)
cmku_rows = {}
for r in cmku:
    cmku_rows.setdefault(int(r["fci_number"]), []).append(r)
atlas_by_number = {}
for a in atlas.values():
    if a.get("fci_number"):
        atlas_by_number.setdefault(a["fci_number"], []).append(a)
split_atlas = {aid: (n, v[0]) for n, vs in SPLIT.items() for v in vs for aid in v[2]}


def own_row(rows_):
    """Of ČMKU's rows of one FCI number, the breed's own row (the shortest English name); the others are varieties."""
    return min(rows_, key=lambda r: len(r["en"]))


def full_form(number_, name):
    """ČMKU's name, or the atlas's full form of it where ČMKU's database cut it short ("gaskoň.typu")."""
    if "." not in name:
        return name, []
    full = [a["cs"] for a in atlas_by_number.get(number_, []) if not a["varieties"]]
    assert len(full) == 1, (number_, name, full)
    return full[0], ["atlas"]


for number_, rows_ in sorted(cmku_rows.items()):
    if number_ >= 900:
        b = cmku_only[number_]
        assert len(rows_) == 1
        names[b["id"]] = (running_text(rows_[0]["cs"]), ["cmku-list"])
        continue
    entries = by_number.get(number_, [])
    if not entries:
        continue  # an FCI number fci-breeds.csv does not have yet (the report names it)
    base = own_row(rows_)
    base_name, base_sources = full_form(number_, base["cs"])
    if number_ in SPLIT:
        for variety, cmku_cs, atlas_ids, _, _ in SPLIT[number_]:
            b = next(e for e in entries if e["fci"]["variety"] == variety)
            if cmku_cs:
                assert any(r["cs"] == cmku_cs for r in rows_), (number_, cmku_cs)
                names[b["id"]] = (running_text(cmku_cs), ["cmku-list"])
                if cmku_cs != base["cs"]:
                    alias(b["id"], running_text(base_name), "cmku-list")
            else:
                names[b["id"]] = (running_text(atlas[atlas_ids[0]]["cs"]), ["atlas"])
                alias(b["id"], running_text(base_name), "cmku-list")
        continue
    assert len(entries) == 1, (number_, [e["id"] for e in entries])
    b = entries[0]
    names[b["id"]] = (running_text(base_name), ["cmku-list"] + base_sources)
    for r in rows_:
        if r is not base:
            alias(b["id"], running_text(full_form(number_, r["cs"])[0]), "cmku-list")

# FCI breeds ČMKU does not list: the atlas's name where it has one (its own reading of the FCI's list).
atlas_only = []
for number_, entries in by_number.items():
    if number_ not in cmku_rows and len(entries) == 1 and atlas_by_number.get(number_):
        names[entries[0]["id"]] = (running_text(atlas_by_number[number_][0]["cs"]), ["atlas"])
        atlas_only.append(number_)

# The atlas's other forms (everyday spellings, varieties) are aliases of their breed or variety.
for a in atlas.values():
    number_ = a.get("fci_number")
    if not number_ or number_ not in by_number:
        continue
    if a["id"] in split_atlas:
        _, variety = split_atlas[a["id"]]
        b = next(e for e in by_number[number_] if e["fci"]["variety"] == variety)
    elif len(by_number[number_]) == 1:
        b = by_number[number_][0]
    else:
        raise SystemExit(f"atlas entry {a['id']} ({a['cs']}) belongs to none of FCI {number_}'s varieties")
    alias(b["id"], running_text(a["cs"].replace(" — ", " - ")), "atlas")

# The names dedog used before: the breed's name where ČMKU has none, else an alias.
for breed_id, earlier in earlier_czech.items():
    for i, (name, source) in enumerate(earlier):
        if i == 0 and breed_id not in names:
            names[breed_id] = (name, [source])
        else:
            alias(breed_id, name, source)

for b in breeds:
    def note(source, field):
        b["sources"].setdefault(source, [])
        if field not in b["sources"][source]:
            b["sources"][source].append(field)
    if b["id"] in names:
        b["name"]["cs"], sources = names[b["id"]]
        for source in sources:
            note(source, "name.cs")
    seen = {key(b["name"]["cs"] or b["name"]["en"])}
    for name, source in aliases.get(b["id"], []):
        if key(name) not in seen:
            seen.add(key(name))
            b["aliases"]["cs"].append(name)
            note(source, "aliases.cs")

# ---------------------------------------------------------------- other names: the AKC's, the FCI's languages', people's
def note_alias(b, source, field):
    """Breed `b`'s sources say that `source` gave it names in `field` ("aliases.en")."""
    fields = b["sources"].setdefault(source, [])
    if field not in fields:
        fields.append(field)


def add_english_alias(b, name, source):
    """`name` as an English alias of breed `b`, from `source`, unless b is called so already."""
    if key(name) not in {key(x) for x in [b["name"]["en"]] + b["aliases"]["en"]}:
        b["aliases"]["en"].append(name)
        note_alias(b, source, "aliases.en")


# akc-names.tsv: each AKC name that differs from its breed's catalogue names is an English alias of that breed.
for akc_name, breed_id in name_rows(args.akc_names):
    assert akc_name in akc, f"akc-names.tsv: {akc_name!r} is not in akc-data-latest.csv"
    assert breed_id in by_id, f"akc-names.tsv: no breed {breed_id!r}"
    add_english_alias(by_id[breed_id], akc_name, "akc")

# fci-names-de-fr-es.tsv: each German, French or Spanish name that differs from its breed's catalogue names is an
# alias of every variety of that FCI standard ("Berner Sennenhund", "Teckel", "Berger Allemand").
for number_, *foreign in name_rows(args.fci_names):
    for b in by_number.get(int(number_), []):
        known = {key(x) for x in [b["name"]["en"], b["name"]["cs"] or ""] + b["aliases"]["en"] + b["aliases"]["cs"] + b["aliases"]["fci"]}
        for name in foreign:
            name = title_foreign(name.strip()) if name.strip() else ""
            if name and key(name) not in known:
                known.add(key(name))
                b["aliases"]["fci"].append(name)
                note_alias(b, "fci-languages", "aliases.fci")

# cmku-breeds.csv's English column: ČMKU's name for the breed in English or in its home country's language ("Czech
# Terrier", "Magyar Vizsla", "Mastino Napoletano"), an English alias of the breed it names where it differs from its
# names: a variety's row of its variety (as SPLIT pairs them), the breed's own row of every variety, and ČMKU's own
# national breeds (9xx) of theirs.
def add_cmku_alias(b, name):
    """ČMKU's English-column `name` as an English alias of breed `b`, unless its English names or FCI-language names have it."""
    if key(name) not in {key(x) for x in b["aliases"]["fci"]}:
        add_english_alias(b, name.strip(), "cmku-list")


for number_, rows_ in sorted(cmku_rows.items()):
    entries = [cmku_only[number_]] if number_ >= 900 else by_number.get(number_, [])
    base = own_row(rows_)
    for r in rows_:
        named = entries
        if r is not base and number_ in SPLIT:
            named = [e for e in entries for variety, cmku_cs, *_ in SPLIT[number_]
                     if cmku_cs == r["cs"] and e["fci"]["variety"] == variety] or entries
        elif r is not base and len(entries) > 1:
            continue  # a variety's row of a standard dedog does not split: its own breed is not there to name
        for b in named:
            add_cmku_alias(b, r["en"])

# other-names.tsv: a nickname or other name of a breed, as its source's description of that breed says it ("commonly
# known as the Westie"); checked to occur there, and added to every catalogue breed named as the source names it.
# A name no ../shared table gives (source "web") carries the page it was read on and the page's words saying it.
for source, breed, name, *page in name_rows(args.other_names):
    if source == "web":
        assert len(page) == 2 and page[0].startswith("https://"), f"other-names.tsv: {name!r} needs a page and its words"
        assert name.lower() in page[1].lower(), f"other-names.tsv: {name!r} is not in the words quoted from {page[0]}"
    else:
        rows = {"wikipedia": wiki, "akc": akc}[source]
        assert breed in rows, f"other-names.tsv: no {breed!r} in the {source} table"
        assert name.lower() in rows[breed]["description"].lower(), f"other-names.tsv: {name!r} is not in {source}'s {breed!r}"
    named = [b for b in breeds if key(breed) in {key(x) for x in [b["name"]["en"]] + b["aliases"]["en"] + b["aliases"]["fci"]}]
    assert named, f"other-names.tsv: no catalogue breed is called {breed!r}"
    for b in named:
        add_english_alias(b, name, "other-names-web" if source == "web" else "other-names")

# ---------------------------------------------------------------- the bundled models' other classes
for r in table(args.more_classes, delimiter="\t"):
    assert r["id"] in by_id and not by_id[r["id"]]["labels"], r
    by_id[r["id"]]["labels"].append(r["class"])

# ---------------------------------------------------------------- shared shape for every breed
for b in breeds:
    b["bundledModel"] = bool(b["labels"])  # the bundled models' labels: the Stanford classes and more-classes.tsv
    b["temperament"] = [w.strip() for w in b["temperament"].split(",")] if b["temperament"] else []
    b["sources"] = [{"source": s, "fields": fs} for s, fs in b["sources"].items()]
    if b["cross"] is None:
        del b["cross"]

# ---------------------------------------------------------------- Czech vocabulary: every English term used
vocabulary, vocabulary_sources = {}, {}
for line in open(args.vocabulary, encoding="utf-8"):
    if line.startswith("#") or not line.strip():
        continue
    kind, english, czech, source = line.rstrip("\n").split("\t")
    if vocabulary.get(english, czech) != czech:
        raise SystemExit(f"czech-vocabulary.tsv gives {english!r} two Czech terms: {vocabulary[english]!r}, {czech!r}")
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
used_sources = {u["source"] for b in breeds for u in b["sources"]}
assert used_sources <= {s["id"] for s in SOURCES}, used_sources - {s["id"] for s in SOURCES}

args.output.parent.mkdir(parents=True, exist_ok=True)
args.output.write_text(json.dumps({"formatVersion": 2, "sources": SOURCES,
                                   "vocabulary": {"cs": {t: vocabulary[t] for t in sorted(terms)}},
                                   "breeds": breeds}, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")

# ---------------------------------------------------------------- report
recognised = sum(b["bundledModel"] for b in breeds)
with_cs = sum(b["name"]["cs"] is not None for b in breeds)
fci_breeds = [b for b in breeds if b["fci"]]
lacking = sorted({(b["fci"]["number"], b["name"]["en"]) for b in fci_breeds if b["name"]["cs"] is None})
others = [b["name"]["en"] for b in breeds if not b["fci"] and b["name"]["cs"] is None]
not_in_fci_table = sorted(n for n in cmku_rows if n < 900 and n not in by_number)
print(f"wrote {len(breeds)} breeds ({recognised} recognised by the bundled models) and {len(terms)} Czech terms "
      f"to {args.output}")
print(f"Czech names: {with_cs} of {len(breeds)} breeds; {len({b['fci']['number'] for b in fci_breeds if b['name']['cs']})} "
      f"of the {len(fci)} FCI breeds (ČMKU lists {len([n for n in cmku_rows if n < 900 and n in by_number])} of them; "
      f"the atlas alone names FCI {', '.join(map(str, sorted(atlas_only)))})")
print("FCI breeds without a Czech name: " + ("; ".join(f"{n} {e}" for n, e in lacking) or "none"))
print("other breeds without a Czech name: " + (", ".join(others) or "none"))
if not_in_fci_table:
    print("ČMKU numbers the FCI table lacks (not in the catalogue): " + ", ".join(map(str, not_in_fci_table)))
if unused:
    print(f"unused vocabulary: {unused}")
