// dedog's page: the shell (navigation, language, token) and a hash router. Nothing imports it: what the screens
// share is in dom.js, i18n.js, api.js and server.js.
import { whenUnauthorized } from "./api.js";
import { t, lang, setLang } from "./i18n.js";
import { h, show, errorCard, navigation } from "./dom.js";
import { renderIdentify } from "./identify.js";
import { renderBreeds, renderBreed } from "./breeds.js";
import { renderQuiz } from "./quiz.js";
import { renderAbout, tokenForm } from "./about.js";
import { renderHistory } from "./history.js";
import { renderLive } from "./live.js";
import { loadServerInfo } from "./server.js";

function route() {
  const hash = location.hash.replace(/^#\/?/, "");
  const [path, search = ""] = hash.split("?");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  const query = new URLSearchParams(search);
  const name = parts[0] || "identify";
  for (const a of document.querySelectorAll("#nav a")) {
    if (a.dataset.route === (name === "live" ? "identify" : name)) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  }
  document.title = `dedog — ${t({ identify: "navIdentify", breeds: "navBreeds", quiz: "navQuiz", history: "navHistory", live: "liveTitle", about: "navAbout" }[name] ?? "navIdentify")}`;
  switch (name) {
    case "breeds": return parts[1] ? renderBreed(parts[1]) : renderBreeds(query);
    case "quiz": return renderQuiz();
    case "history": return renderHistory();
    case "live": return renderLive();
    case "about": return renderAbout();
    default: return renderIdentify();
  }
}

function translateShell() {
  document.documentElement.lang = lang();
  for (const el of document.querySelectorAll("[data-t]")) el.textContent = t(el.dataset.t);
  document.getElementById("skip").textContent = t("skip");
  const button = document.getElementById("language");
  button.textContent = t("switchTo");
  button.lang = lang() === "cs" ? "en" : "cs";
  button.setAttribute("aria-label", t("switchLabel"));
}

whenUnauthorized(() => {
  if (document.getElementById("token-form")) return;
  show([h("h1", {}, t("tokenTitle")), errorCard({ code: "unauthorized", status: 401 }), tokenForm()]);
});

document.getElementById("language").addEventListener("click", () => {
  navigation.moved = true;
  setLang(lang() === "cs" ? "en" : "cs");
  translateShell();
  route();
});
window.addEventListener("hashchange", () => { navigation.moved = true; route(); });
translateShell();
loadServerInfo().catch(() => {}).finally(route);
