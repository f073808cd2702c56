// Live (#/live): the camera's picture, named as it goes. Frames go to the API one after another (several a second),
// their answers smoothed over frames so that a name does not flicker; the box where the dog is drawn over the video;
// pause, and "keep this one" into the history. Without a camera or permission: said, with the way back.
import { api } from "./api.js";
import { h, show, onLeave, errorCard, placeBox, dogBox, labelBox, boxedDogs } from "./dom.js";
import { t } from "./i18n.js";
import { loadServerInfo, askCareful } from "./server.js";
import { shortAnswer } from "./answer.js";
import { remember, thumbnail } from "./history.js";

/** How far one frame moves the smoothed answer (about the last five frames count). */
const smoothing = 0.35;
/** A name is shown once its smoothed score reaches this, and replaced only by one ahead of it by `margin`. */
const showFrom = 0.5;
const margin = 0.1;
/** Frames are sent at most this many pixels on their longer side (the network sees less). */
const frameSide = 640;

/** The smoothed answer: a score per outcome (a breed's key, "(noDog)", "(other)"), decayed each frame; divided by
 * the weight the frames so far carry, so that the first frames' scores are not too low (as Adam's moments are). */
export class Smoother {
  constructor() { this.raw = new Map(); this.shown = null; this.names = new Map(); this.weight = 0; }

  /** An outcome's smoothed score, between 0 and 1. */
  score(key) { return this.weight ? (this.raw.get(key) ?? 0) / this.weight : 0; }

  add(record) {
    this.weight = this.weight * (1 - smoothing) + smoothing;
    for (const [key, raw] of this.raw) this.raw.set(key, raw * (1 - smoothing));
    const vote = (key, p) => this.raw.set(key, (this.raw.get(key) ?? 0) + smoothing * p);
    if (record.verdict === "noDog") vote("(noDog)", 1);
    else if (record.verdict === "otherBreed") vote("(other)", 1);
    else for (const b of record.breeds) { vote(b.label, b.probability); this.names.set(b.label, b); }
    let best = null;
    for (const key of this.raw.keys()) if (best === null || this.score(key) > this.score(best)) best = key;
    // What is shown stays while it holds well enough and nothing is clearly ahead of it.
    const current = this.shown ? this.score(this.shown) : 0;
    if (this.shown && current >= showFrom * 0.6 && this.score(best) < current + margin) return this.answer();
    this.shown = best !== null && this.score(best) >= showFrom ? best : null;
    return this.answer();
  }

  /** {verdict, breed (an API breed entry), score} of what is shown, or null while nothing is steady. */
  answer() {
    if (!this.shown) return null;
    const score = this.score(this.shown);
    if (this.shown === "(noDog)") return { verdict: "noDog", score };
    if (this.shown === "(other)") return { verdict: "otherBreed", score };
    return { verdict: "dog", breed: this.names.get(this.shown), score };
  }
}

function steadyText(answer) {
  if (!answer) return t("liveLooking");
  if (answer.verdict === "noDog") return t("liveNoDog");
  if (answer.verdict === "otherBreed") return t("shortOtherBreed");
  return shortAnswer({ verdict: "dog", breeds: [{ ...answer.breed, probability: answer.score }] });
}

/** Why the camera cannot be used, in words: no camera API (an insecure page), no camera, or no permission. */
function cameraProblem(error) {
  if (!window.isSecureContext || !navigator.mediaDevices?.getUserMedia) return t("liveInsecure");
  if (error?.name === "NotAllowedError" || error?.name === "SecurityError") return t("liveDenied");
  return t("liveNoCamera");
}

export async function renderLive() {
  // The benchmark's and the tests' figures: when the first frame was there, when its answer came, how many came.
  const timing = document.body.dataset;
  delete timing.liveFirstAnswerMs;
  delete timing.liveSince;
  timing.liveAnswers = "0";
  timing.liveApiMs = "0";
  const video = h("video", { id: "live-video", autoplay: "", playsinline: "", "aria-hidden": "true" });
  video.muted = true;
  // A box per dog of the latest frame (the first is #live-box), each named when the frame shows several.
  const boxes = [dogBox("live-box", "")];
  const name = h("p", { class: "live-name", id: "live-name", "aria-hidden": "true" }, t("liveStarting"));
  // Screen readers hear the steady name when it changes, not every frame.
  const announce = h("p", { class: "visually-hidden", id: "live-announce", role: "status" });
  const pause = h("button", { type: "button", id: "live-pause" }, t("livePause"));
  const keep = h("button", { type: "button", class: "primary", id: "live-keep", disabled: "" }, t("liveKeep"));
  const note = h("p", { class: "hint", id: "live-note", role: "status" });
  const back = h("p", {}, h("a", { href: "#/" }, t("liveBack")));
  show([
    h("h1", {}, t("liveTitle")),
    h("p", { class: "muted" }, t("liveIntro")),
    h("div", { class: "live-frame" }, video, boxes[0], name),
    h("div", { class: "row" }, pause, keep),
    announce, note, back,
  ]);
  let stopped = false;
  let stream = null;
  onLeave(() => {
    stopped = true;
    stream?.getTracks().forEach((track) => track.stop());
  });
  try {
    if (!window.isSecureContext || !navigator.mediaDevices?.getUserMedia) throw new Error("no camera API");
    stream = await navigator.mediaDevices.getUserMedia({ audio: false, video: { facingMode: { ideal: "environment" } } });
  } catch (error) {
    if (stopped) return;
    show([h("h1", {}, t("liveTitle")),
      h("div", { class: "card error", role: "alert", id: "live-problem" }, h("strong", {}, t("liveUnavailable")), h("p", {}, cameraProblem(error))),
      h("p", {}, h("a", { class: "button primary", href: "#/" }, t("liveChoose")))]);
    return;
  }
  if (stopped) { stream.getTracks().forEach((track) => track.stop()); return; }
  video.srcObject = stream;
  try { await video.play(); } catch { /* autoplay of a muted video is allowed; a refusal shows as no frames */ }

  let model;
  try {
    ({ model } = await loadServerInfo());
  } catch (error) {
    note.replaceChildren(errorCard(error));
    return;
  }
  const smoother = new Smoother();
  const canvas = document.createElement("canvas");
  let paused = false, last = null, lastShown = null, answers = 0, failures = 0;
  pause.addEventListener("click", () => {
    paused = !paused;
    pause.textContent = paused ? t("liveResume") : t("livePause");
    if (paused) video.pause(); else video.play().catch(() => {});
  });
  // The small picture is made only for a frame that is kept, from the JPEG that was sent with it.
  keep.addEventListener("click", async () => {
    if (!last) return;
    const { record, frame } = last;
    let thumb = null;
    try {
      const picture = await createImageBitmap(frame);
      thumb = thumbnail(picture, picture.width, picture.height);
      picture.close();
    } catch { /* kept without a picture */ }
    const kept = await remember(t("liveFrame"), thumb, record);
    note.replaceChildren(kept ? t("liveKept", { answer: shortAnswer(record) }) : t("historyUnavailable"), " ",
      kept ? h("a", { href: "#/history" }, t("liveToHistory")) : "");
  });

  while (!stopped && !(video.videoWidth > 0)) await new Promise((r) => setTimeout(r, 20));
  const firstFrame = performance.now();
  timing.liveSince = String(firstFrame);
  while (!stopped) {
    if (paused) { await new Promise((r) => setTimeout(r, 100)); continue; }
    const scale = Math.min(1, frameSide / Math.max(video.videoWidth, video.videoHeight));
    canvas.width = Math.round(video.videoWidth * scale);
    canvas.height = Math.round(video.videoHeight * scale);
    canvas.getContext("2d").drawImage(video, 0, 0, canvas.width, canvas.height);
    const frame = await new Promise((resolve) => canvas.toBlob(resolve, "image/jpeg", 0.85));
    if (stopped) break;
    let record;
    const asked = performance.now();
    try {
      record = await api.predict(model.name, frame, 5, askCareful(model));
      timing.liveApiMs = String(Number(timing.liveApiMs) + performance.now() - asked);
      failures = 0;
    } catch (error) {
      if (stopped) break;
      // A failing server is said, and tried again a little later.
      failures += 1;
      note.replaceChildren(errorCard(error));
      await new Promise((r) => setTimeout(r, Math.min(5000, 500 * failures)));
      continue;
    }
    if (stopped) break;
    answers += 1;
    timing.liveAnswers = String(answers);
    if (answers === 1) timing.liveFirstAnswerMs = String(performance.now() - firstFrame);
    if (note.querySelector(".error")) note.replaceChildren();
    last = { record, frame };
    keep.disabled = false;
    const steady = smoother.add(record);
    const text = steadyText(steady);
    name.textContent = text;
    name.className = `live-name ${steady?.verdict ?? "looking"}`;
    if (text !== lastShown) { lastShown = text; if (steady) announce.textContent = text; }
    // The boxes where this frame's dogs are, in the frame's pixels: as shares of the video's picture.
    const dogs = boxedDogs(record);
    while (boxes.length < dogs.length) {
      boxes.push(dogBox(`live-box-${boxes.length + 1}`, ""));
      name.before(boxes[boxes.length - 1]);
    }
    boxes.forEach((box, i) => {
      if (i >= dogs.length) { box.hidden = true; return; }
      labelBox(box, dogs.length > 1 ? shortAnswer(dogs[i]) : "");
      placeBox(box, dogs[i].location, canvas.width, canvas.height);
    });
  }
}
