// About: the model, its measured accuracy, what happens to a photo, and the server's token when it wants one.
import { h, show, errorCard, onLeave } from "./dom.js";
import { t, percent } from "./i18n.js";
import { token, setToken } from "./api.js";
import { loadServerInfo } from "./server.js";

export async function renderAbout() {
  show([h("h1", {}, t("aboutTitle")), h("p", {}, t("loading"))]);
  let alive = true;
  onLeave(() => { alive = false; });
  let info;
  try {
    info = await loadServerInfo(true);
  } catch (error) {
    if (!alive) return;
    show([h("h1", {}, t("aboutTitle")), errorCard(error), tokenForm()]);
    return;
  }
  if (!alive) return;
  const model = info.model;
  const training = model.training || {};
  const rows = [];
  const add = (name, value) => { if (value !== undefined && !Number.isNaN(Number(value))) rows.push([name, percent(Number(value))]); };
  add(t("accTop1"), training.validationTop1);
  add(t("accTop5"), training.validationTop5);
  for (const b of (training.backbones || "").split("+").filter(Boolean)) {
    add(t("accBackbone", { name: b }), training[`${b}.validationTop1`]);
  }
  show([
    h("h1", {}, t("aboutTitle")),
    h("p", {}, t("aboutIntro")),
    h("h2", {}, t("aboutModel")),
    h("dl", { class: "fields", id: "model-fields" },
      h("dt", {}, t("aboutFile")), h("dd", {}, model.file),
      h("dt", {}, t("aboutBreeds")), h("dd", {}, String(model.labels.length)),
      h("dt", {}, t("aboutBackbones")), h("dd", {}, model.backbones.map((b) => `${b.architecture} (${b.inputSize} px)`).join(", "))),
    h("h2", {}, t("aboutAccuracy")),
    rows.length ? h("table", { id: "accuracy" },
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("aboutMeasure")), h("th", { scope: "col" }, t("aboutValue")))),
      h("tbody", {}, rows.map(([name, value]) => h("tr", {}, h("td", {}, name), h("td", { class: "num" }, value)))))
      : h("p", {}, t("aboutNoAccuracy")),
    rows.length ? h("p", { class: "hint" }, t("aboutAccuracyNote", { count: training.validationImages ?? "?", dataset: training.dataset ?? "?" })) : null,
    h("h2", {}, t("aboutPrivacy")),
    h("p", {}, t("aboutPrivacyText")),
    h("p", {}, model.learning ? t("aboutLearning", { file: model.file, count: model.memorySize }) : t("aboutNoLearning")),
    token() ? tokenForm() : null,
  ]);
}

/** Where the user gives the server's token (kept in this browser's storage). */
export function tokenForm() {
  const input = h("input", { type: "password", id: "token", autocomplete: "current-password", value: token() });
  const form = h("form", { class: "card", id: "token-form" },
    h("h2", {}, t("tokenTitle")), h("p", {}, t("tokenText")),
    h("label", { for: "token" }, t("tokenLabel")), input, " ",
    h("button", { type: "submit", class: "primary" }, t("tokenSave")));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    setToken(input.value.trim());
    location.reload();
  });
  return form;
}
