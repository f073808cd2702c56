// History: every identification of this browser (a small picture, the answer, the time), kept in IndexedDB,
// never sent anywhere; the oldest dropped first beyond a limit. The history screen lists them, deletes one or all.
import { h, show, onLeave } from "./dom.js";
import { t, lang, number } from "./i18n.js";
import { shortAnswer, breedName } from "./answer.js";

/** How many identifications the history keeps. */
export const historyLimit = 300;
const droppedKey = "dedog.historyDropped";

let opening = null;
function database() {
  opening ??= new Promise((resolve, reject) => {
    if (!window.indexedDB) { reject(new Error("no IndexedDB")); return; }
    const request = indexedDB.open("dedog", 1);
    request.onupgradeneeded = () => request.result.createObjectStore("history", { keyPath: "id", autoIncrement: true });
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
    request.onblocked = () => reject(new Error("blocked"));
  });
  opening.catch(() => { opening = null; });
  return opening;
}

/** `work(store)` in one transaction; resolves with what it returns once the transaction has completed. */
async function transaction(mode, work) {
  const db = await database();
  return new Promise((resolve, reject) => {
    const tx = db.transaction("history", mode);
    let result;
    Promise.resolve(work(tx.objectStore("history"))).then((r) => { result = r; }, reject);
    tx.oncomplete = () => resolve(result);
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error ?? new Error("aborted"));
  });
}

const done = (request) => new Promise((resolve, reject) => {
  request.onsuccess = () => resolve(request.result);
  request.onerror = () => reject(request.error);
});

/** A picture (an image, a canvas) of `width`×`height` at most `side` pixels wide and high, as a small JPEG data
 * URL (a few kB). */
export function thumbnail(image, width = image.naturalWidth, height = image.naturalHeight, side = 160) {
  const scale = Math.min(1, side / Math.max(width || 1, height || 1));
  const canvas = document.createElement("canvas");
  canvas.width = Math.max(1, Math.round(width * scale));
  canvas.height = Math.max(1, Math.round(height * scale));
  canvas.getContext("2d").drawImage(image, 0, 0, canvas.width, canvas.height);
  return canvas.toDataURL("image/jpeg", 0.75);
}

/** What the history keeps of an answer: the verdict, what a photo without a dog looks like, the kind of dog (its
 * name as the answer said it), and the top three breeds with both catalogue names. */
function trimmed(record) {
  return {
    verdict: record.verdict,
    looksLike: record.looksLike ? { kind: record.looksLike.kind } : null,
    kind: record.kind ? { group: record.kind.group, section: record.kind.section, name: record.kind.name, names: record.kind.names } : null,
    breeds: record.breeds.slice(0, 3).map((b) => ({
      label: b.label, probability: b.probability,
      breed: b.breed ? { id: b.breed.id, name: { en: b.breed.name?.en, cs: b.breed.name?.cs }, cross: b.breed.cross } : null,
    })),
  };
}

/** Keeps an identification; past the limit the oldest go. Resolves to false where the browser keeps nothing. */
export async function remember(file, thumb, record) {
  try {
    const entry = { time: Date.now(), file, thumb, record: trimmed(record) };
    const dropped = await transaction("readwrite", async (store) => {
      store.add(entry);
      const count = await done(store.count());
      let over = count - historyLimit;
      if (over <= 0) return 0;
      const keys = await done(store.getAllKeys(null, over));
      for (const key of keys) store.delete(key);
      return keys.length;
    });
    if (dropped) localStorage.setItem(droppedKey, String(Number(localStorage.getItem(droppedKey) || 0) + dropped));
    return true;
  } catch {
    return false;
  }
}

/** Every entry, newest first. */
export async function entries() {
  const all = await transaction("readonly", (store) => done(store.getAll()));
  return all.reverse();
}

async function forgetEntry(id) { await transaction("readwrite", (store) => { store.delete(id); }); }
async function forgetAll() {
  await transaction("readwrite", (store) => { store.clear(); });
  localStorage.removeItem(droppedKey);
}

let timeFormat = null;
function when(time) {
  if (timeFormat?.language !== lang()) {
    timeFormat = { language: lang(), format: new Intl.DateTimeFormat(lang(), { dateStyle: "medium", timeStyle: "short" }) };
  }
  return timeFormat.format.format(new Date(time));
}

export async function renderHistory() {
  const list = h("ul", { class: "history", id: "history" }, h("li", { class: "muted" }, t("loading")));
  const status = h("p", { class: "hint", id: "history-status", role: "status" });
  const clear = h("div", { class: "row", id: "history-clear" });
  let alive = true;
  show([
    h("h1", {}, t("historyTitle")),
    h("p", { class: "muted" }, t("historyIntro", { limit: number(historyLimit) })),
    clear, status, list,
  ]);
  onLeave(() => { alive = false; });
  let all;
  try {
    all = await entries();
  } catch {
    if (alive) list.replaceChildren(h("li", { class: "muted" }, t("historyUnavailable")));
    return;
  }
  if (!alive) return;
  const dropped = Number(localStorage.getItem(droppedKey) || 0);
  if (dropped) status.textContent = t("historyDropped", { count: number(dropped), limit: number(historyLimit) });

  const draw = () => {
    if (!all.length) {
      list.replaceChildren(h("li", { class: "muted", id: "history-empty" }, t("historyEmpty")));
      clear.replaceChildren();
      return;
    }
    list.replaceChildren(...all.map(item));
    const ask = h("button", { type: "button", id: "history-delete-all" }, t("historyDeleteAll", { count: number(all.length) }));
    ask.addEventListener("click", () => {
      const yes = h("button", { type: "button", class: "danger", id: "history-delete-all-yes" }, t("historyDeleteAllYes"));
      const no = h("button", { type: "button", id: "history-delete-all-no" }, t("historyKeep"));
      yes.addEventListener("click", async () => {
        await forgetAll();
        all = [];
        status.textContent = t("historyDeletedAll");
        draw();
      });
      no.addEventListener("click", () => { draw(); ask.focus(); });
      clear.replaceChildren(h("span", {}, t("historyDeleteAllSure", { count: number(all.length) })), yes, no);
      no.focus();
    });
    clear.replaceChildren(ask);
  };

  function item(entry) {
    const record = entry.record;
    const first = record.breeds[0];
    const answer = shortAnswer(record);
    const id = record.verdict === "noDog" || record.verdict === "otherBreed" ? null : first?.breed?.id;
    const remove = h("button", { type: "button", class: "small", "aria-label": t("historyDelete", { answer, time: when(entry.time) }) },
      t("historyDeleteOne"));
    remove.addEventListener("click", async () => {
      await forgetEntry(entry.id);
      const index = all.indexOf(entry);
      all = all.filter((e) => e !== entry);
      status.textContent = t("historyDeleted", { answer });
      draw();
      // Focus goes on to the next entry's delete button (or the list's end), not back to the page's top.
      const buttons = list.querySelectorAll("li button");
      (buttons[Math.min(index, buttons.length - 1)] ?? document.querySelector("#view h1"))?.focus();
    });
    const alike = record.verdict === "otherBreed" ? record.breeds.slice(0, 2).map(breedName).join(", ") : null;
    return h("li", { "data-id": String(entry.id) },
      entry.thumb ? h("img", { src: entry.thumb, alt: "", width: "64", height: "64" }) : h("span", { class: "no-thumb" }),
      h("div", {},
        id ? h("a", { href: `#/breeds/${encodeURIComponent(id)}`, class: "answer" }, answer) : h("strong", { class: "answer" }, answer),
        alike ? h("span", { class: "hint" }, " — ", t("historyAlike", { alike })) : null,
        h("br"),
        h("span", { class: "hint when" }, h("time", { datetime: new Date(entry.time).toISOString() }, when(entry.time)), " · ", entry.file)),
      remove);
  }
  draw();
}
