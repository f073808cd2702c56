// An answer of the API said in the page's language: the verdict in a sentence, or in a few words for lists
// (this visit's photos, the history). Records kept in the history have the API's shape, trimmed.
import { t, percent, lang } from "./i18n.js";

/** A predicted breed's name in the page's language now (the answer carries both catalogue names). */
export function breedName(b) {
  if (!b) return "";
  return (lang() === "cs" ? b.breed?.name?.cs : b.breed?.name?.en) || b.breed?.name?.en || b.label;
}

/** The kind of dog's name in the page's language now (the answer carries it in each language). */
export function kindName(k) {
  return k?.names?.[lang()] || k?.name || "";
}

/** The verdict as a sentence: "Most likely Beagle (97.5 %)." */
export function verdictText(record) {
  const [first, second] = record.breeds;
  switch (record.verdict) {
    case "noDog": return t({ cat: "verdictNoDogCat", animal: "verdictNoDogAnimal" }[record.looksLike?.kind] ?? "verdictNoDog");
    case "otherBreed": return t(record.kind ? "verdictOtherBreedKind" : "verdictOtherBreed",
      { alike: record.breeds.slice(0, 2).map(breedName).join(", "), kind: kindName(record.kind) });
    case "unsure": return (second ? t("verdictUnsure", { breed: breedName(first), second: breedName(second) })
      : t("verdictUnsureOne", { breed: breedName(first) })) + (record.kind ? " " + t("kindNote", { kind: kindName(record.kind) }) : "");
    default: return t("verdictDog", { breed: breedName(first) + (first.breed?.cross ? ", " + first.breed.cross : ""),
      pct: percent(first.probability) });
  }
}

/** The verdict in a few words: "Beagle 97.5 %", "Perhaps Beagle", "No dog", "A breed the model does not know". */
export function shortAnswer(record) {
  const first = record.breeds[0];
  switch (record.verdict) {
    case "noDog": return t(record.looksLike?.kind === "cat" ? "shortNoDogCat" : "shortNoDog");
    case "otherBreed": return record.kind ? t("shortOtherBreedKind", { kind: kindName(record.kind) }) : t("shortOtherBreed");
    case "unsure": return t("shortUnsure", { breed: breedName(first) });
    default: return `${breedName(first)} ${percent(first?.probability ?? 0)}`;
  }
}
