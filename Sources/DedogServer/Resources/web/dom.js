// Small DOM helpers. Text always goes in as text (never as HTML): quiz files and file names come from strangers.
import { number, t } from "./i18n.js";

/** h("p", {class: "x"}, "text", child…): an element with attributes (on* keys become listeners) and children. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2).toLowerCase(), value);
    else if (key === "text") el.textContent = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

/** Whether the user has moved to another screen since the page loaded (on load, focus stays at the top). */
export const navigation = { moved: false };

/** What the screen shown now asks to be done when it is replaced (a timer stopped, a camera let go). */
let leaving = [];
export function onLeave(action) { leaving.push(action); }

/**
 * The view's content replaced by `nodes`, after the leaving screen's onLeave actions; after the user moves to
 * another screen, focus moves to its heading so screen readers announce it and Tab goes on from there.
 */
export function show(nodes, { focus = true } = {}) {
  const actions = leaving;
  leaving = [];
  for (const action of actions) action();
  const view = document.getElementById("view");
  // As in h(): a part left out (null, undefined, false) is not shown, never as the word "null".
  view.replaceChildren(...[nodes].flat().filter((n) => n !== null && n !== undefined && n !== false));
  if (focus && navigation.moved) {
    const heading = view.querySelector("h1");
    if (heading) { heading.tabIndex = -1; heading.focus({ preventScroll: false }); }
  }
}

/** A message for an ApiError (or anything thrown) in the user's language, by the API's error code. */
export function errorText(error) {
  const key = `err_${error?.code}`;
  const text = t(key);
  return text !== key ? text : t("err_other", { status: error?.status ?? "?" });
}

/** Places `box` over a picture of `width`×`height` pixels where `where` ({x, y, width, height}, in those pixels)
 * says, as shares of the picture (so it follows the picture's size on screen), and shows it. */
/** A box over a photo for one dog (placed by `placeBox`), with the dog's name on it when given. */
export function dogBox(id, name) {
  return labelBox(h("div", { class: "dog-box", id, hidden: "" }), name);
}

/** `box` with `name` written on it (nothing when empty). */
export function labelBox(box, name) {
  box.replaceChildren(...(name ? [h("span", { class: "dog-box-name" }, name)] : []));
  return box;
}

/** The dogs of an answer that have a box to draw: each dog of a photo of several, else the answer's own. */
export function boxedDogs(record) {
  if (record.dogs?.length > 1) return record.dogs.filter((d) => d.location);
  return record.verdict !== "noDog" && record.location ? [record] : [];
}

export function placeBox(box, where, width, height) {
  const share = (v, of) => `${(100 * v / of).toFixed(2)}%`;
  box.style.left = share(where.x, width);
  box.style.top = share(where.y, height);
  box.style.width = share(where.width, width);
  box.style.height = share(where.height, height);
  box.hidden = false;
}

/** A card that says what went wrong. */
export function errorCard(error) {
  return h("div", { class: "card error", role: "alert" }, h("strong", {}, t("errorTitle")), h("p", { class: "message" }, errorText(error)));
}

/** A breed's size, weight, life span line from the catalogue details of a prediction. */
export function summary(details) {
  if (!details) return "";
  const parts = [];
  if (details.size) parts.push(t(`size_${details.size}`));
  if (details.weight) parts.push(range(details.weight));
  if (details.lifeSpan) parts.push(range(details.lifeSpan));
  return parts.join(" · ");
}

/** {min, max, unit} → "10–15 years" / "10–15 let". */
export function range(r) {
  const unit = r.unit === "years" ? t("years") : r.unit;
  return (r.min === r.max ? number(r.min) : `${number(r.min)}–${number(r.max)}`) + ` ${unit}`;
}
