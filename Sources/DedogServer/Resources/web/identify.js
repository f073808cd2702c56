// Identify: a photo in (file, camera, drop, paste), the verdict and the top breeds out; confirm and undo when the
// server learns; the photos of this visit (kept in this tab only), and each answer kept in the history.
import { api, careful, setCareful } from "./api.js";
import { h, show, errorCard, summary, onLeave, placeBox, dogBox, boxedDogs } from "./dom.js";
import { t, percent } from "./i18n.js";
import { serverInfo, loadServerInfo, recognisedBreeds, hasCareful, askCareful } from "./server.js";
import { breedName, verdictText, shortAnswer } from "./answer.js";
import { remember, thumbnail } from "./history.js";

/** This visit's photos, newest first: {id, file, name, thumb, record, error}. The files stay in memory (confirming
 * needs them) up to `visitLimit`; only the photo on screen has an object URL, revoked when it leaves the screen. */
const visits = [];
const visitLimit = 20;
let shownId = null;
let nextId = 1;
/** The object URL of the photo on screen, if any. */
let shownUrl = null;
/** The history's writes, one after another. */
let keeping = Promise.resolve();

function photoUrl(file) {
  if (shownUrl) URL.revokeObjectURL(shownUrl);
  shownUrl = file ? URL.createObjectURL(file) : null;
  return shownUrl;
}

export function renderIdentify() {
  // Two live regions: the status line (a slow answer is coming) and, unseen, the verdict alone: a screen reader
  // announces that, not the whole answer (photo, bars, confirm form) at every update.
  const status = h("div", { id: "status", class: "status", role: "status" });
  const announce = h("p", { id: "announce", class: "visually-hidden", role: "status" });
  const result = h("section", { id: "result", "aria-labelledby": "verdict" });
  const chooser = (capture, text, id) => h("label", { class: "button file-button" + (capture ? " primary" : ""), for: id }, text,
    h("input", { type: "file", id, accept: "image/*,.heic,.heif,.avif,.webp", capture: capture ? "environment" : null, onchange: (e) => {
      const file = e.target.files?.[0];
      e.target.value = "";
      if (file) identify(file);
    } }));
  const drop = h("div", { class: "drop", id: "drop" },
    h("div", { class: "buttons" }, chooser(true, t("takePhoto"), "camera"), chooser(false, t("choosePhoto"), "photo"),
      h("a", { class: "button", href: "#/live", id: "live-link" }, t("liveOpen"))),
    h("p", { class: "hint" }, t("dropHere")));
  // Careful mode, where the served model has one (its unknown-breed rule has a careful point).
  const carefulBox = h("input", { type: "checkbox", id: "careful", checked: careful() });
  carefulBox.addEventListener("change", () => setCareful(carefulBox.checked));
  const carefulRow = h("p", { class: "careful", id: "careful-row", hidden: "" },
    h("label", { class: "inline", for: "careful" }, carefulBox, t("carefulMode")), " ",
    h("span", { class: "hint" }, t("carefulHint")));
  loadServerInfo().then(({ model }) => { if (hasCareful(model)) carefulRow.hidden = false; }, () => {});
  drop.addEventListener("dragover", (e) => { e.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e) => {
    e.preventDefault();
    drop.classList.remove("over");
    const file = [...(e.dataTransfer?.files || [])][0];
    if (file) identify(file);
  });
  show([
    h("h1", {}, t("identifyTitle")),
    h("p", { class: "muted" }, t("identifyIntro")),
    drop, carefulRow, status, announce, result,
    h("section", { "aria-labelledby": "visit-title" },
      h("h2", { id: "visit-title" }, t("visitTitle")),
      h("p", { class: "hint" }, t("visitNote")),
      h("ul", { class: "visit", id: "visit" })),
  ]);
  renderVisits();
  const shown = visits.find((v) => v.id === shownId);
  if (shown) renderResult(shown);
  onLeave(() => photoUrl(null));
}

/** Photos pasted anywhere on the identify screen. */
document.addEventListener("paste", (e) => {
  if (!document.getElementById("drop")) return;
  const file = [...(e.clipboardData?.files || [])].find((f) => f.type.startsWith("image/")) || e.clipboardData?.files?.[0];
  if (file) { e.preventDefault(); identify(file); }
});

/** Resolves once the browser has painted what is on the page now. Work the answer does not need (the history's
 * write, every breed in the confirm list) waits for it, so the first frame of the answer has only the answer. */
const afterPaint = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));

export async function identify(file) {
  const started = performance.now();
  const visit = { id: nextId++, file, name: file.name || "photo", thumb: null, record: null, error: null };
  // The browser decodes the photo (off the page's thread) while the server classifies it, so showing the answer
  // waits for neither; the small picture of the visit list and the history is drawn from it once the answer is seen.
  const preview = new Image();
  preview.src = photoUrl(file);
  const decoded = preview.decode().then(() => true, () => false);
  // "Working" only when the answer is slow to come: a quick answer needs no message in between (nor a repaint
  // while the server works, nor a screen reader announcing it).
  const status = document.getElementById("status");
  const slow = setTimeout(() => { if (status) status.textContent = t("working", { file: visit.name }); }, 400);
  const apiStarted = performance.now();
  try {
    const { model } = await loadServerInfo();
    visit.record = await api.predict(model.name, file, 5, askCareful(model));
  } catch (error) {
    visit.error = error;
  }
  const apiMs = performance.now() - apiStarted;
  clearTimeout(slow);
  visits.unshift(visit);
  // The oldest photos of a long visit let go of their files (their answers stay in the history).
  visits.splice(visitLimit);
  shownId = visit.id;
  if (status) status.textContent = "";
  const announce = document.getElementById("announce");
  if (announce) announce.textContent = visit.error ? t("errorTitle") : verdictText(visit.record);
  renderResult(visit, preview.src);
  addVisit(visit);
  // Into the history in the order the answers came, each once its small picture is made.
  keeping = keeping.then(() => decoded).then(async (drawable) => {
    await afterPaint();
    if (drawable) visit.thumb = thumbnail(preview);
    document.querySelector(`#visit li[data-visit="${visit.id}"] .no-thumb`)?.replaceWith(visitThumb(visit));
    return visit.record ? remember(visit.name, visit.thumb, visit.record) : false;
  }).catch(() => false);
  // On a phone the chooser fills the screen: bring the answer into view.
  const result = document.getElementById("result");
  if (result && result.getBoundingClientRect().top > window.innerHeight * 0.6) result.scrollIntoView({ block: "start" });
  // The result is on screen once the browser has painted it: the page's time, photo chosen to answer seen.
  await afterPaint();
  document.body.dataset.resultMs = String(performance.now() - started);
  document.body.dataset.apiMs = String(apiMs);
}

/** The answer for `visit` in the result area; `url`: its photo's object URL when already made. */
function renderResult(visit, url = null) {
  const result = document.getElementById("result");
  if (!result) return;
  const photo = h("img", { class: "photo", src: url ?? photoUrl(visit.file), decoding: "async", alt: t("yourPhoto", { file: visit.name }) });
  photo.addEventListener("error", () => photo.replaceWith(h("p", { class: "hint" }, t("noPreview"))));
  if (visit.error) {
    result.className = "result";
    result.replaceChildren(errorCard(visit.error));
    return;
  }
  const record = visit.record;
  const parts = [h("p", { class: `verdict ${record.verdict}`, id: "verdict" }, verdictText(record))];
  if (record.dogs?.length > 1) {
    parts.push(h("p", { id: "dogs" }, t("severalDogs", {
      count: record.dogs.length,
      list: record.dogs.map((d) => d.verdict === "dog" ? `${breedName(d.breeds[0])} (${percent(d.breeds[0]?.probability ?? 0)})`
        : shortAnswer(d)).join(", "),
    })));
  }
  if (record.verdict !== "noDog") {
    parts.push(h("h2", {}, t("topBreeds")));
    parts.push(h("ol", { class: "bars", id: "bars" }, record.breeds.map((b) => {
      const fill = h("span", {});
      fill.style.width = `${Math.max(0.5, b.probability * 100).toFixed(1)}%`;
      const id = b.breed?.id;
      return h("li", {},
        id ? h("a", { href: `#/breeds/${encodeURIComponent(id)}` }, breedName(b)) : h("span", {}, breedName(b)),
        h("span", { class: "pct" }, percent(b.probability)),
        h("div", { class: "bar", "aria-hidden": "true" }, fill),
        b.breed ? h("span", { class: "summary" }, summary(b.breed)) : null);
    })));
    if (serverInfo.model?.learning) parts.push(confirmCard(visit));
  }
  result.className = "result with-photo";
  result.replaceChildren(h("div", {}, ...photoWithBox(photo, record)), h("div", {}, parts));
}

/** The photo with the box where the network saw the dog (in the photo's pixels) drawn over it, and a note when
 * the answer also comes from a closer look at it. */
function photoWithBox(photo, record) {
  const several = record.dogs?.length > 1;
  const dogs = boxedDogs(record);
  const places = dogs.map((d) => d.location);
  if (!places.length) return [photo];
  // Each dog's box carries its name when the photo shows several.
  const boxes = dogs.map((d, i) => dogBox(i ? `dog-box-${i + 1}` : "dog-box", several ? shortAnswer(d) : ""));
  const place = () => {
    const width = photo.naturalWidth, height = photo.naturalHeight;
    if (!width || !height) return;
    places.forEach((where, i) => placeBox(boxes[i], where, width, height));
  };
  if (photo.complete) place(); else photo.addEventListener("load", place);
  const note = several ? "boxesNote" : places[0].zoomed ? "boxZoomed" : "boxNote";
  return [h("div", { class: "photo-frame" }, photo, ...boxes), h("p", { class: "hint photo-note" }, t(note))];
}

/** The confirm list's value for "a breed not in this list". */
const otherBreed = "(other)";

function confirmCard(visit) {
  const select = h("select", { id: "confirm-breed" });
  // A breed the model does not know: any catalogue name (English or Czech), or a name of the user's own.
  const other = () => h("option", { value: otherBreed }, t("confirmOther"));
  // Typing searches the whole catalogue (any English or Czech name, accents or not) and offers its answers.
  const names = h("datalist", { id: "confirm-new-names" });
  const newName = h("input", { id: "confirm-new-breed", type: "text", maxlength: "100", autocomplete: "off", list: "confirm-new-names" });
  let searching = null;
  newName.addEventListener("input", () => {
    clearTimeout(searching);
    const query = newName.value.trim();
    if (query.length < 2) { names.replaceChildren(); return; }
    searching = setTimeout(() => api.breeds(query).then((r) => {
      if (newName.value.trim() === query) names.replaceChildren(...r.breeds.slice(0, 8).map((b) => h("option", { value: b.displayName })));
    }).catch(() => {}), 200);
  });
  const newRow = h("div", { class: "confirm-new", hidden: "" }, h("label", { for: "confirm-new-breed" }, t("confirmNewName")),
    newName, names, h("p", { class: "hint" }, t("confirmNewHint")));
  // What happened, said (a live region with words only); what can be done about it beside it.
  const note = h("p", { class: "confirm-note", role: "status" });
  const actions = h("div", { class: "confirm-actions" });
  const button = h("button", { type: "button", class: "primary", id: "confirm" }, t("confirmButton"));
  const card = h("section", { class: "card", "aria-labelledby": "confirm-title" },
    h("h2", { id: "confirm-title" }, t("confirmTitle")),
    h("p", { class: "hint" }, t("confirmIntro")),
    h("div", { class: "row" }, h("div", {}, h("label", { for: "confirm-breed" }, t("confirmBreed")), select), button),
    newRow, note, actions);
  // The model's own top breeds at once; every breed it knows once the answer is painted (a hundred options to lay
  // out); another breed last.
  const top = visit.record.breeds.map((b) => b.breed?.id).filter(Boolean);
  select.replaceChildren(...visit.record.breeds.filter((b) => b.breed?.id).map((b) => h("option", { value: b.breed.id }, breedName(b))),
    other());
  if (visit.record.verdict === "otherBreed") select.value = otherBreed;
  const showNewName = () => {
    newRow.hidden = select.value !== otherBreed;
    button.textContent = newRow.hidden ? t("confirmButton") : t("teachButton");
  };
  select.addEventListener("change", () => { showNewName(); if (!newRow.hidden) newName.focus(); });
  showNewName();
  afterPaint().then(recognisedBreeds).then((breeds) => {
    const chosen = select.value;
    const ordered = [...top.map((id) => breeds.find((b) => b.id === id)).filter(Boolean),
      ...breeds.filter((b) => !top.includes(b.id))];
    select.replaceChildren(...ordered.map((b) => h("option", { value: b.id }, b.displayName)), other());
    if (chosen) select.value = chosen;
    showNewName();
  }).catch(() => {});
  button.addEventListener("click", async () => {
    const teaching = select.value === otherBreed;
    actions.replaceChildren();
    if (teaching && !newName.value.trim()) {
      note.textContent = t("confirmNewEmpty");
      newName.focus();
      return;
    }
    button.disabled = true;
    try {
      const answer = teaching ? await api.learn(visit.file, newName.value.trim(), true) : await api.learn(visit.file, select.value);
      const undo = h("button", { type: "button", id: "undo" }, t("undo"));
      note.textContent = answer.taughtNewBreed ? t("confirmTaught", { breed: answer.breed, count: answer.memorySize })
        : answer.added ? t("confirmDone", { breed: answer.breed, count: answer.memorySize })
        : t("confirmAlready", { breed: answer.breed });
      actions.replaceChildren(undo);
      undo.addEventListener("click", async () => {
        undo.disabled = true;
        try {
          await api.forget(answer.fingerprint);
          note.textContent = t("undone");
          actions.replaceChildren();
        } catch (error) {
          note.textContent = "";
          actions.replaceChildren(errorCard(error));
        }
        button.disabled = false;
        button.focus();
      });
      undo.focus();
    } catch (error) {
      note.textContent = "";
      actions.replaceChildren(errorCard(error));
      button.disabled = false;
    }
  });
  return card;
}

function renderVisits() {
  const list = document.getElementById("visit");
  if (!list) return;
  if (!visits.length) { list.replaceChildren(h("li", { class: "muted" }, t("visitEmpty"))); return; }
  list.replaceChildren(...visits.map(visitItem));
}

/** The newest photo at the top of the visit list, the oldest beyond the limit gone. */
function addVisit(visit) {
  const list = document.getElementById("visit");
  if (!list || !visits.includes(visit)) return;
  if (!list.querySelector("li[data-visit]")) list.replaceChildren();
  list.prepend(visitItem(visit));
  while (list.children.length > visits.length) list.lastElementChild.remove();
}

const visitThumb = (v) => v.thumb ? h("img", { src: v.thumb, alt: "" }) : h("span", { class: "no-thumb" });

function visitItem(v) {
  const thumb = visitThumb(v);
  const answer = v.error ? t("errorTitle") : shortAnswer(v.record);
  return h("li", { "data-visit": String(v.id) }, h("button", { type: "button", "aria-label": t("showAgain", { file: v.name }), onclick: () => {
    shownId = v.id;
    renderResult(v);
    document.getElementById("result")?.scrollIntoView({ block: "nearest" });
  } }, thumb, h("span", {}, h("strong", {}, v.name), h("br"), answer)));
}
