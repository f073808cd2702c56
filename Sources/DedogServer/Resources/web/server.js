// What the server said of itself (GET /v1/models), shared by the screens: the model's name (its predictions
// route), whether it learns, the breeds it names. Imported by the screens and the shell, importing neither.
import { api, careful } from "./api.js";
import { lang } from "./i18n.js";

/** What the server said of its model, once loaded. */
export const serverInfo = { model: null };

/** Whether the served model has a careful mode (its unknown-breed rule has a careful point). */
export const hasCareful = (model) => model?.thresholds?.unknownBreed?.carefulBelow != null;

/** Whether answers are asked for in careful mode: the identify screen's switch is on and the model has one. */
export const askCareful = (model) => careful() && hasCareful(model);

export async function loadServerInfo(again = false) {
  if (!serverInfo.model || again) serverInfo.model = (await api.models()).models[0];
  return serverInfo;
}

const breedCache = {};
/** The breeds the served model names, with names in the page's language (for the confirm list). */
export async function recognisedBreeds() {
  const l = lang();
  breedCache[l] ??= api.breeds("", true).then((r) => r.breeds);
  return breedCache[l];
}
