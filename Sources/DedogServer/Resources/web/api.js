// The dedog API, as any other client calls it (GET /openapi.json describes it). Errors become ApiError with the
// API's code, so the page can say what went wrong in the user's language.
import { lang } from "./i18n.js";

export class ApiError extends Error {
  constructor(status, code, message, field) {
    super(message);
    this.status = status;
    this.code = code;
    this.field = field;
  }
}

/** Listeners told when the server wants its token (401). */
const onUnauthorized = [];
export function whenUnauthorized(listener) { onUnauthorized.push(listener); }

export function token() { return localStorage.getItem("dedog.token") || ""; }
/** Careful mode (the API's `careful=true`), as the identify screen's switch left it. */
export function careful() { return localStorage.getItem("dedog.careful") === "true"; }
export function setCareful(on) {
  if (on) localStorage.setItem("dedog.careful", "true"); else localStorage.removeItem("dedog.careful");
}
export function setToken(value) {
  if (value) localStorage.setItem("dedog.token", value); else localStorage.removeItem("dedog.token");
}

async function call(method, path, { body, headers = {}, query = {} } = {}) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries({ lang: lang(), ...query })) if (v !== undefined && v !== null) url.searchParams.set(k, v);
  const h = { Accept: "application/json", ...headers };
  if (token()) h.Authorization = `Bearer ${token()}`;
  let response;
  try {
    response = await fetch(url, { method, body, headers: h });
  } catch (e) {
    throw new ApiError(0, "network", String(e), null);
  }
  let data = null;
  try { data = await response.json(); } catch { /* not JSON */ }
  if (!response.ok) {
    const error = data?.error ?? {};
    if (response.status === 401) onUnauthorized.forEach((l) => l());
    throw new ApiError(response.status, error.code ?? `http${response.status}`, error.message ?? response.statusText, error.field ?? null);
  }
  return data;
}

export const api = {
  /** The photo's answer from the server's model `model` (its name in GET /v1/models): verdict, top breeds with
   * probabilities and catalogue details. */
  predict: (model, file, top = 5, careful = false) => call("POST", `/predictions/${encodeURIComponent(model)}`, {
    body: file, headers: { "Content-Type": "application/octet-stream" },
    query: { top_k: top, careful: careful ? "true" : undefined },
  }),
  breeds: (q, recognised) => call("GET", "/v1/breeds", { query: { q: q || undefined, recognised: recognised ? "true" : undefined } }),
  breed: (id) => call("GET", `/v1/breeds/${encodeURIComponent(id)}`),
  models: () => call("GET", "/v1/models"),
  learn: (file, breed, newBreed = false) => {
    const form = new FormData();
    form.append("photo", file, file.name || "photo");
    form.append("breed", breed);
    if (newBreed) form.append("newBreed", "true");
    return call("POST", "/v1/memory", { body: form });
  },
  forget: (fingerprint) => call("DELETE", `/v1/memory/${encodeURIComponent(fingerprint)}`),
  quizzes: () => call("GET", "/v1/quizzes"),
  quiz: (name) => call("GET", `/v1/quizzes/${encodeURIComponent(name)}`),
  checkQuiz: (file) => call("POST", "/v1/quizzes/check", { body: file, headers: { "Content-Type": "application/json" } }),
};
