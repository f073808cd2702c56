// The breed quiz: a set from the server (dedog serve --quizzes) or a file the user picks (checked by the server
// as every quiz file is), played question by question: green for right, red for wrong, always said in words too.
import { api } from "./api.js";
import { h, show, errorCard, onLeave } from "./dom.js";
import { t, lang } from "./i18n.js";

let game = null;
let timer = null;

function answerName(a) { return (lang() === "cs" ? a.cs : a.en) || a.en; }

/** A fair shuffle, so the right answer is anywhere. */
function shuffled(items) {
  const a = [...items];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

export async function renderQuizList() {
  stopTimer();
  const upload = h("input", { type: "file", id: "quiz-file", accept: ".json,application/json", "aria-describedby": "quiz-file-hint" });
  const limit = h("select", { id: "quiz-limit" },
    h("option", { value: "0" }, t("quizNoLimit")),
    [10, 20, 30].map((n) => h("option", { value: String(n) }, t("quizSeconds", { n }))));
  const problem = h("div", { id: "quiz-problem", role: "alert" });
  upload.addEventListener("change", async () => {
    const file = upload.files?.[0];
    upload.value = "";
    if (!file) return;
    problem.replaceChildren();
    try {
      start(await api.checkQuiz(file), Number(limit.value));
    } catch (error) {
      problem.replaceChildren(errorCard(error));
    }
  });
  const list = h("ul", { class: "breed-list", id: "quiz-list" }, h("li", { class: "muted" }, t("loading")));
  show([
    h("h1", {}, t("quizTitle")),
    h("p", { class: "muted" }, t("quizIntro")),
    h("label", { for: "quiz-limit" }, t("quizTimeLimit")), limit,
    h("h2", {}, t("quizServer")), list,
    h("h2", {}, t("quizUpload")),
    h("label", { for: "quiz-file", class: "button file-button" }, t("quizUpload"), upload),
    h("p", { class: "hint", id: "quiz-file-hint" }, t("quizUploadHint")),
    problem,
  ]);
  try {
    const { quizzes } = await api.quizzes();
    list.replaceChildren(...(quizzes.length ? quizzes.map((q) => h("li", {},
      h("button", { type: "button", class: "quiz-start", "data-quiz": q.name, onclick: async () => {
        try {
          start(await api.quiz(q.name), Number(limit.value));
        } catch (error) {
          problem.replaceChildren(errorCard(error));
        }
      } }, h("strong", {}, q.title), " — ", t("quizQuestions", { count: q.questions }))))
      : [h("li", { class: "muted" }, t("quizNone"))]));
  } catch (error) {
    list.replaceChildren(h("li", {}, errorCard(error)));
  }
}

function start(quiz, seconds, questions = quiz.questions) {
  game = { quiz, seconds, questions: shuffled(questions), index: 0, score: 0, missed: [], finished: false };
  ask();
}

function stopTimer() {
  if (timer) clearInterval(timer);
  timer = null;
}

/**
 * Shows the current question. A question already answered (the language was switched) is shown answered, with
 * the same answer order; the clock goes on from where it was.
 */
function ask() {
  stopTimer();
  const q = game.questions[game.index];
  if (game.shownIndex !== game.index) {
    game.shownIndex = game.index;
    game.options = shuffled([q.right, ...q.wrong]);
    game.choice = undefined;
    game.left = game.seconds;
  }
  const feedback = h("p", { class: "feedback", id: "feedback", role: "status" });
  const hint = h("p", { class: "hint", id: "hint-text", "aria-live": "polite" });
  const next = h("button", { type: "button", class: "primary", id: "next", hidden: true },
    game.index + 1 < game.questions.length ? t("quizNext") : t("quizFinish"));
  const clock = h("span", { id: "clock" });
  const buttons = game.options.map((a) => h("button", { type: "button", "data-answer": a.id, onclick: () => choose(a) }, answerName(a)));
  const hintButton = h("button", { type: "button", id: "hint" }, t("quizHint"));
  hintButton.addEventListener("click", async () => {
    hintButton.disabled = true;
    try {
      const b = await api.breed(q.right.id);
      hint.textContent = t("quizHintText", { country: b.text.origin ?? "–", size: b.text.size ?? "–",
        group: b.fci ? `${b.fci.group} (${b.text.fciGroup})` : "–" });
    } catch {
      hint.textContent = t("quizNoHint");
    }
  });
  next.addEventListener("click", () => {
    game.index += 1;
    if (game.index < game.questions.length) ask(); else finish();
  });

  /** The answer chosen (null: the time ran out): scored once, then shown. */
  function choose(answer) {
    if (game.choice !== undefined) return;
    game.choice = answer;
    stopTimer();
    if (answer && answer.id === q.right.id) game.score += 1; else game.missed.push(q);
    reveal();
    next.focus();
  }

  function reveal() {
    const answer = game.choice;
    const right = answer && answer.id === q.right.id;
    for (const b of buttons) {
      b.disabled = true;
      if (b.dataset.answer === q.right.id) b.classList.add("right");
      else if (answer && b.dataset.answer === answer.id) b.classList.add("wrong");
    }
    const name = answerName(q.right);
    feedback.className = `feedback ${right ? "right" : "wrong"}`;
    feedback.textContent = right ? t("quizRight", { breed: name }) : answer ? t("quizWrong", { breed: name }) : t("quizTimeUp", { breed: name });
    document.getElementById("score").textContent = t("quizScore", { score: game.score });
    next.hidden = false;
  }

  show([
    h("div", { class: "quiz-head" },
      h("span", { id: "progress" }, t("quizProgress", { n: game.index + 1, total: game.questions.length })),
      clock, h("span", { id: "score" }, t("quizScore", { score: game.score }))),
    h("h1", {}, t("quizWhich")),
    h("img", { class: "quiz-photo", src: `data:image/jpeg;base64,${q.photo}`, alt: t("quizPhoto", { n: game.index + 1 }) }),
    h("div", { class: "answers", role: "group", "aria-labelledby": "progress" }, buttons),
    feedback, next,
    h("div", { class: "row" }, hintButton, h("button", { type: "button", id: "quiz-stop", onclick: leave }, t("quizStop"))),
    hint,
  ]);
  if (game.choice !== undefined) {
    reveal();
  } else if (game.seconds > 0) {
    // The clock runs while the question is on screen: leaving the quiz (another screen, the language switched)
    // stops it, and coming back goes on from where it was.
    onLeave(stopTimer);
    clock.textContent = t("quizSecondsLeft", { n: game.left });
    timer = setInterval(() => {
      game.left -= 1;
      clock.textContent = t("quizSecondsLeft", { n: Math.max(0, game.left) });
      if (game.left <= 0) choose(null);
    }, 1000);
  }
}

function finish() {
  stopTimer();
  game.finished = true;
  const { quiz, missed, score, questions, seconds } = game;
  const missedNames = [...new Set(missed.map((q) => answerName(q.right)))];
  show([
    h("h1", {}, t("quizEndTitle")),
    h("p", { class: "verdict", id: "final-score" }, t("quizEndScore", { score, total: questions.length })),
    h("h2", {}, t("quizMissed")),
    missedNames.length ? h("ul", { id: "missed" }, missedNames.map((n) => h("li", {}, n))) : h("p", {}, t("quizNoneMissed")),
    h("div", { class: "row" },
      missed.length ? h("button", { type: "button", class: "primary", id: "again-missed", onclick: () => start(quiz, seconds, missed) }, t("quizAgainMissed")) : null,
      h("button", { type: "button", id: "again", onclick: () => start(quiz, seconds) }, t("quizAgain")),
      h("button", { type: "button", id: "other-quizzes", onclick: leave }, t("quizOther"))),
  ]);
}

/** Back to the list of quizzes; the game is over. */
function leave() {
  stopTimer();
  game = null;
  renderQuizList();
}

/** The game in progress (re-drawn, e.g. in a new language), its end, or the list when there is none. */
export function renderQuiz() {
  if (!game) renderQuizList();
  else if (game.finished) finish();
  else ask();
}
