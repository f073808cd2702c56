// Breeds: the whole catalogue, searched as you type (the server folds case, diacritics and typos as
// `dedog breeds search` does), and a page per breed with every field and its sources.
import { api } from "./api.js";
import { h, show, errorCard, range, onLeave } from "./dom.js";
import { t, lang } from "./i18n.js";

const state = { q: "", recognised: false };
let searchTimer = null;
let generation = 0;

export function renderBreeds(query) {
  if (query.has("q")) state.q = query.get("q");
  if (query.has("recognised")) state.recognised = query.get("recognised") === "true";
  const input = h("input", { type: "search", id: "breed-search", value: state.q, autocomplete: "off", spellcheck: "false",
    "aria-describedby": "search-hint", "aria-controls": "breed-list" });
  const only = h("input", { type: "checkbox", id: "only-recognised", checked: state.recognised });
  input.addEventListener("input", () => {
    state.q = input.value;
    clearTimeout(searchTimer);
    searchTimer = setTimeout(refresh, 120);
  });
  only.addEventListener("change", () => { state.recognised = only.checked; refresh(); });
  show([
    h("h1", {}, t("breedsTitle")),
    h("label", { for: "breed-search" }, t("searchLabel")), input,
    h("p", { class: "hint", id: "search-hint" }, t("searchHint")),
    h("label", { class: "inline", for: "only-recognised" }, only, t("onlyRecognised")),
    h("p", { id: "breed-count", role: "status" }, t("loading")),
    h("ul", { class: "breed-list", id: "breed-list" }),
  ], { focus: !document.activeElement || document.activeElement === document.body || !document.getElementById("breed-search") });
  refresh();
}

async function refresh() {
  const mine = ++generation;
  const list = document.getElementById("breed-list");
  const count = document.getElementById("breed-count");
  if (!list) return;
  try {
    const { breeds } = await api.breeds(state.q.trim(), state.recognised);
    if (mine !== generation) return;
    count.textContent = breeds.length === 0 ? t("noBreedFound", { q: state.q.trim() })
      : breeds.length === 1 ? t("breedCountOne") : t("breedCount", { count: breeds.length });
    list.replaceChildren(...breeds.map((b) => {
      const other = lang() === "cs" ? b.name.en : b.name.cs;
      return h("li", {}, h("a", { href: `#/breeds/${encodeURIComponent(b.id)}` },
        h("strong", {}, b.displayName),
        b.recognised ? h("span", { class: "badge" }, t("recognisedMark")) : null,
        other && other !== b.displayName ? h("span", { class: "other" }, h("br"), other) : null));
    }));
  } catch (error) {
    if (mine === generation) list.replaceChildren(h("li", {}, errorCard(error)));
  }
}

export async function renderBreed(id) {
  show([h("p", {}, t("loading"))], { focus: false });
  // A breed that comes after the user has moved on (to another breed, say) must not replace that screen.
  let alive = true;
  onLeave(() => { alive = false; });
  let b;
  try {
    b = await api.breed(id);
  } catch (error) {
    if (!alive) return;
    show([h("h1", {}, t("errorTitle")), errorCard(error), h("p", {}, h("a", { href: "#/breeds" }, t("backToBreeds")))]);
    return;
  }
  if (!alive) return;
  const text = b.text;
  const rows = [];
  const row = (name, ...values) => {
    const shown = values.flat().filter((v) => v !== null && v !== undefined && v !== "");
    rows.push(h("dt", {}, name), h("dd", {}, shown.length ? shown.join(" · ") : t("unknown")));
  };
  row(t("fieldNames"), `${t("fieldEnglish")}: ${b.name.en}`, `${t("fieldCzech")}: ${b.name.cs ?? t("czechNameMissing")}`);
  const aliases = [...(lang() === "cs" ? b.aliases.cs : b.aliases.en), ...(lang() === "cs" ? b.aliases.en : b.aliases.cs)];
  if (aliases.length) row(t("fieldAliases"), aliases.join(", "));
  if (b.cross) {
    rows.push(h("dt", {}, t("fieldCross")), h("dd", {}, b.cross.parents.flatMap((p, i) => [
      i ? " × " : "",
      h("a", { href: `#/breeds/${encodeURIComponent(p.breeds[0])}` }, (lang() === "cs" && p.name.cs) || p.name.en)])));
  }
  if (b.fci) {
    row(t("fieldFCI"), t("fieldFCINumber", { n: b.fci.number }), t("fieldGroup", { n: b.fci.group, name: text.fciGroup }),
      text.fciSection ? t("fieldSection", { name: text.fciSection }) : null,
      text.fciVariety ? t("fieldVariety", { name: text.fciVariety }) : null,
      b.fci.provisional ? t("fieldProvisional") : null);
  } else {
    row(t("fieldFCI"), text.fciNote ?? t("fieldNoFCI"));
  }
  row(t("fieldOrigin"), text.origin);
  row(t("fieldSize"), text.size);
  row(t("fieldHeight"), b.height ? measure(b.height) : null);
  row(t("fieldWeight"), b.weight ? measure(b.weight) : null);
  row(t("fieldLife"), b.lifeSpan ? range(b.lifeSpan) : null);
  row(t("fieldCoat"), text.grooming ? t("fieldGrooming", { v: text.grooming.toLowerCase() }) : null,
    text.shedding ? t("fieldShedding", { v: text.shedding.toLowerCase() }) : null);
  row(t("fieldColours"), text.colours.join(", "));
  row(t("fieldTemperament"), text.temperament.join(", "));
  row(t("fieldModel"), b.recognised ? t("fieldModelYes") : t("fieldModelNo"));
  if (b.labels.length) row(t("fieldLabels"), b.labels.join(", "));
  const sources = h("ul", { class: "sources" }, text.sources.map((s) => h("li", {},
    s.repository ? h("a", { href: `https://github.com/${s.repository}`, rel: "noreferrer" }, s.title) : s.title,
    s.repository ? ` (${s.repository})` : "",
    " — ", t("sourceFields", { fields: s.fields.map((f) => t(`src_${f}`)).join(", ") }))));
  rows.push(h("dt", {}, t("fieldSources")), h("dd", {}, sources));
  show([
    h("p", {}, h("a", { href: "#/breeds" }, "← " + t("backToBreeds"))),
    h("h1", { id: "breed-name" }, b.displayName),
    lang() === "cs" && !text.nameInLanguage ? h("p", { class: "hint" }, t("czechNameMissing")) : null,
    h("dl", { class: "fields", id: "breed-fields" }, rows),
  ]);
}

function measure(m) {
  let s = range(m);
  const sexes = [];
  if (m.male) sexes.push(`${t("male")} ${range(m.male)}`);
  if (m.female) sexes.push(`${t("female")} ${range(m.female)}`);
  if (sexes.length) s += ` (${sexes.join(", ")})`;
  return s;
}
