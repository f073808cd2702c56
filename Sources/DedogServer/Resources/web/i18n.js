// Every word the page shows, in English and Czech. The language follows the browser's (navigator.languages)
// until the user picks one with the switch; the choice is remembered in this browser.

const strings = {
  en: {
    skip: "Skip to content",
    navIdentify: "Identify", navBreeds: "Breeds", navQuiz: "Quiz", navAbout: "About",
    switchTo: "Čeština", switchLabel: "Přepnout do češtiny",
    loading: "Loading…",
    // Identify
    identifyTitle: "Which breed is it?",
    identifyIntro: "Choose a photo of a dog, drop it here or paste it. The photo goes only to this dedog server.",
    takePhoto: "Take a photo", choosePhoto: "Choose a photo", dropHere: "or drop a photo here",
    working: "Looking at {file}…",
    verdictDog: "Most likely {breed} ({pct}).",
    verdictUnsure: "Not sure: it might be {breed} or {second}.",
    verdictUnsureOne: "Not sure: it might be {breed}.",
    verdictNoDog: "There seems to be no dog in this photo.",
    verdictOtherBreed: "A dog, but none of the {count} breeds the model knows; the closest are below.",
    verdictFor: "Answer for {file}",
    boxNote: "The frame shows where the model looked.",
    boxZoomed: "The dog is small in the photo: the model also looked closer at the frame.",
    boxesNote: "The frames show where the model saw each dog.",
    severalDogs: "The photo shows {count} dogs: {list}.",
    topBreeds: "Most likely breeds",
    probability: "probability",
    yourPhoto: "Your photo {file}",
    noPreview: "The browser cannot show this photo, but dedog read it.",
    visitTitle: "Photos of this visit",
    visitNote: "Kept in this browser tab only; closing it forgets them.",
    visitEmpty: "None yet.",
    showAgain: "Show the answer for {file}",
    // Confirm
    confirmTitle: "Is this your dog?",
    confirmIntro: "Tell the model which breed it is, and it will answer photos like this one with that breed.",
    confirmBreed: "Breed",
    confirmButton: "This is my dog",
    confirmDone: "Learned as {breed}. The model now remembers {count} confirmed photos.",
    confirmAlready: "The model already knew this photo as {breed}.",
    undo: "Undo",
    undone: "Undone: the model forgot this photo.",
    // Breeds
    breedsTitle: "Breeds",
    searchLabel: "Search breeds",
    searchHint: "English or Czech names; accents and typos do not matter.",
    onlyRecognised: "Only breeds the model recognises",
    breedCount: "{count} breeds",
    breedCountOne: "1 breed",
    noBreedFound: "No breed matches “{q}”.",
    recognisedMark: "recognised by the model",
    backToBreeds: "All breeds",
    fieldNames: "Names", fieldEnglish: "English", fieldCzech: "Czech", fieldAliases: "Also known as",
    fieldFCI: "FCI", fieldFCINumber: "standard no. {n}", fieldGroup: "group {n}: {name}", fieldSection: "section: {name}",
    fieldVariety: "variety: {name}", fieldProvisional: "provisionally accepted", fieldNoFCI: "not recognised by the FCI",
    fieldOrigin: "Origin", fieldSize: "Size", fieldHeight: "Height", fieldWeight: "Weight", fieldLife: "Life span",
    fieldCoat: "Coat care", fieldGrooming: "grooming: {v}", fieldShedding: "shedding: {v}",
    fieldColours: "Colours", fieldTemperament: "Temperament", fieldModel: "The model",
    fieldModelYes: "recognises it", fieldModelNo: "does not recognise it", fieldLabels: "Model labels",
    fieldSources: "Sources", sourceFields: "fields: {fields}",
    male: "male", female: "female", years: "years", unknown: "–",
    czechNameMissing: "no public source gives a Czech name",
    src_fci: "FCI", src_origin: "origin", src_height: "height", src_weight: "weight", src_lifeSpan: "life span",
    src_coat: "coat", src_colours: "colours", src_temperament: "temperament", "src_name.cs": "Czech name",
    "src_aliases.cs": "other Czech names", src_cross: "parent breeds", "src_cross.cs": "parent breeds in Czech",
    fieldCross: "A cross of",
    size_toy: "toy", size_small: "small", size_medium: "medium", size_large: "large", size_giant: "giant",
    // Quiz
    quizTitle: "Breed quiz",
    quizIntro: "A photo and three or four breeds: pick the right one. The wrong answers are the breeds the model itself mixes up with it.",
    quizServer: "Quizzes on this server",
    quizNone: "This server offers no quizzes (dedog serve --quizzes DIR). Upload one made with dedog quiz make.",
    quizQuestions: "{count} questions",
    quizPlay: "Play",
    quizUpload: "Play a quiz file",
    quizUploadHint: "A file made with dedog quiz make.",
    quizTimeLimit: "Time per question",
    quizNoLimit: "no limit",
    quizSeconds: "{n} seconds",
    quizProgress: "Question {n} of {total}",
    quizScore: "Score: {score}",
    quizWhich: "Which breed is this?",
    quizPhoto: "Photo for question {n}",
    quizRight: "Right! It is {breed}.",
    quizWrong: "Not quite: it is {breed}.",
    quizTimeUp: "Time is up: it is {breed}.",
    quizHint: "Hint",
    quizHintText: "Country: {country}. Size: {size}. FCI group: {group}.",
    quizNoHint: "No hint for this breed.",
    quizNext: "Next question",
    quizFinish: "See the score",
    quizEndTitle: "Done!",
    quizEndScore: "You got {score} of {total} right.",
    quizMissed: "Breeds you missed",
    quizNoneMissed: "You missed none. Well done!",
    quizAgainMissed: "Again with the ones I missed",
    quizAgain: "Play again",
    quizOther: "Other quizzes",
    quizStop: "End the quiz",
    quizSecondsLeft: "{n} s left",
    // About
    aboutTitle: "About dedog",
    aboutIntro: "dedog recognises dog breeds on your own machine: this page talks only to the dedog server that sent it.",
    aboutModel: "The model",
    aboutFile: "File",
    aboutBreeds: "Breeds it knows",
    aboutBackbones: "Networks",
    aboutAccuracy: "Measured accuracy",
    aboutAccuracyNote: "Measured by dedog train on photos held out from training ({count} photos of {dataset}).",
    aboutMeasure: "Measure", aboutValue: "Value",
    accTop1: "right breed first (top-1)", accTop5: "right breed among the first five (top-5)",
    accBackbone: "{name} alone, top-1",
    aboutNoAccuracy: "This model carries no measurements (it is an ImageNet base, not trained by dedog train).",
    aboutPrivacy: "What happens to a photo",
    aboutPrivacyText: "A photo you choose is sent to this server, classified in its memory and forgotten: it is not stored. Only a photo you confirm as your dog is kept, and then not the photo itself, only numbers describing it, in your model file; undo removes them.",
    aboutLearning: "This server learns confirmed photos into {file}; it remembers {count}.",
    aboutNoLearning: "This server does not learn confirmed photos (start it with --learn-model FILE to let it).",
    tokenTitle: "Server token",
    tokenText: "This server wants a token. Enter the one given to dedog serve --token; it is kept in this browser.",
    tokenLabel: "Token",
    tokenSave: "Save",
    // Errors, by the API's error code
    err_damagedPhoto: "The photo is damaged and cannot be read.",
    err_truncatedPhoto: "The photo is cut short (an incomplete download?).",
    err_unsupportedFormat: "This is not a photo dedog can read (JPEG, PNG, HEIC, AVIF or WebP).",
    err_emptyPhoto: "The file is empty.",
    err_tooManyPixels: "The photo has too many pixels for this server.",
    err_bodyTooLarge: "The file is too large for this server.",
    err_busy: "The server is busy; try again in a moment.",
    err_unauthorized: "The server wants its token (see About).",
    err_unknownBreed: "The model does not know that breed.",
    err_learningOff: "This server does not learn photos.",
    err_badQuiz: "This is not a valid dedog quiz file.",
    err_notFound: "Not found.",
    err_network: "The dedog server cannot be reached.",
    err_other: "The server answered with an error ({status}).",
    errorTitle: "Something went wrong",
  },
  cs: {
    skip: "Přeskočit na obsah",
    navIdentify: "Určit plemeno", navBreeds: "Plemena", navQuiz: "Kvíz", navAbout: "O aplikaci",
    switchTo: "English", switchLabel: "Switch to English",
    loading: "Načítám…",
    identifyTitle: "Jaké je to plemeno?",
    identifyIntro: "Vyberte fotku psa, přetáhněte ji sem nebo ji vložte ze schránky. Fotka jde jen na tento server dedog.",
    takePhoto: "Vyfotit", choosePhoto: "Vybrat fotku", dropHere: "nebo sem fotku přetáhněte",
    working: "Prohlížím {file}…",
    verdictDog: "Nejspíš {breed} ({pct}).",
    verdictUnsure: "Nejistý výsledek: může to být {breed} nebo {second}.",
    verdictUnsureOne: "Nejistý výsledek: může to být {breed}.",
    verdictNoDog: "Na fotce asi není žádný pes.",
    verdictOtherBreed: "Je to pes, ale žádné z {count} plemen, která model zná; nejbližší jsou níže.",
    verdictFor: "Výsledek pro {file}",
    boxNote: "Rámeček ukazuje, kam se model díval.",
    boxZoomed: "Pes je na fotce malý: model se na rámeček podíval ještě zblízka.",
    boxesNote: "Rámečky ukazují, kde model viděl kterého psa.",
    severalDogs: "Na fotce jsou psi ({count}): {list}.",
    topBreeds: "Nejpravděpodobnější plemena",
    probability: "pravděpodobnost",
    yourPhoto: "Vaše fotka {file}",
    noPreview: "Prohlížeč tuto fotku neumí zobrazit, ale dedog ji přečetl.",
    visitTitle: "Fotky z této návštěvy",
    visitNote: "Jsou jen v této záložce prohlížeče; jejím zavřením se zapomenou.",
    visitEmpty: "Zatím žádné.",
    showAgain: "Znovu ukázat výsledek pro {file}",
    confirmTitle: "Je to váš pes?",
    confirmIntro: "Řekněte modelu, jaké je to plemeno, a podobné fotky pak tak i určí.",
    confirmBreed: "Plemeno",
    confirmButton: "Tohle je můj pes",
    confirmDone: "Naučeno jako {breed}. Model si teď pamatuje potvrzených fotek: {count}.",
    confirmAlready: "Model už tuto fotku znal jako {breed}.",
    undo: "Vrátit zpět",
    undone: "Vráceno: model tuto fotku zapomněl.",
    breedsTitle: "Plemena",
    searchLabel: "Hledat plemeno",
    searchHint: "Česky nebo anglicky; na diakritice a překlepech nezáleží.",
    onlyRecognised: "Jen plemena, která model rozpozná",
    breedCount: "Počet plemen: {count}",
    breedCountOne: "Jedno plemeno",
    noBreedFound: "Hledání „{q}“ neodpovídá žádné plemeno.",
    recognisedMark: "model ho rozpozná",
    backToBreeds: "Všechna plemena",
    fieldNames: "Jména", fieldEnglish: "anglicky", fieldCzech: "česky", fieldAliases: "Také",
    fieldFCI: "FCI", fieldFCINumber: "standard č. {n}", fieldGroup: "skupina {n}: {name}", fieldSection: "sekce: {name}",
    fieldVariety: "varieta: {name}", fieldProvisional: "prozatímně uznané", fieldNoFCI: "FCI ho neuznává",
    fieldOrigin: "Původ", fieldSize: "Velikost", fieldHeight: "Výška", fieldWeight: "Hmotnost", fieldLife: "Délka života",
    fieldCoat: "Péče o srst", fieldGrooming: "česání: {v}", fieldShedding: "línání: {v}",
    fieldColours: "Barvy", fieldTemperament: "Povaha", fieldModel: "Model",
    fieldModelYes: "ho rozpozná", fieldModelNo: "ho nerozpozná", fieldLabels: "Štítky modelu",
    fieldSources: "Zdroje", sourceFields: "údaje: {fields}",
    male: "pes", female: "fena", years: "let", unknown: "–",
    czechNameMissing: "český název žádný veřejný zdroj neuvádí",
    src_fci: "FCI", src_origin: "původ", src_height: "výška", src_weight: "hmotnost", src_lifeSpan: "délka života",
    src_coat: "srst", src_colours: "barvy", src_temperament: "povaha", "src_name.cs": "český název",
    "src_aliases.cs": "další české názvy", src_cross: "rodičovská plemena", "src_cross.cs": "česká jména rodičovských plemen",
    fieldCross: "Kříženec plemen",
    size_toy: "trpasličí", size_small: "malé", size_medium: "střední", size_large: "velké", size_giant: "obří",
    quizTitle: "Kvíz plemen",
    quizIntro: "Fotka a tři nebo čtyři plemena: vyberte správné. Špatné odpovědi jsou plemena, která si s ním plete sám model.",
    quizServer: "Kvízy na tomto serveru",
    quizNone: "Tento server žádné kvízy nenabízí (dedog serve --quizzes SLOŽKA). Nahrajte kvíz vytvořený příkazem dedog quiz make.",
    quizQuestions: "Otázek: {count}",
    quizPlay: "Hrát",
    quizUpload: "Hrát kvíz ze souboru",
    quizUploadHint: "Soubor vytvořený příkazem dedog quiz make.",
    quizTimeLimit: "Čas na otázku",
    quizNoLimit: "bez omezení",
    quizSeconds: "{n} sekund",
    quizProgress: "Otázka {n} z {total}",
    quizScore: "Skóre: {score}",
    quizWhich: "Jaké je to plemeno?",
    quizPhoto: "Fotka k otázce {n}",
    quizRight: "Správně! Je to {breed}.",
    quizWrong: "Tentokrát ne: je to {breed}.",
    quizTimeUp: "Čas vypršel: je to {breed}.",
    quizHint: "Nápověda",
    quizHintText: "Země: {country}. Velikost: {size}. Skupina FCI: {group}.",
    quizNoHint: "K tomuto plemeni nápovědu nemáme.",
    quizNext: "Další otázka",
    quizFinish: "Ukázat skóre",
    quizEndTitle: "Hotovo!",
    quizEndScore: "Správně: {score} z {total}.",
    quizMissed: "Plemena, která jste netrefili",
    quizNoneMissed: "Netrefili jste žádné. Výborně!",
    quizAgainMissed: "Znovu jen ty netrefené",
    quizAgain: "Hrát znovu",
    quizOther: "Jiné kvízy",
    quizStop: "Ukončit kvíz",
    quizSecondsLeft: "zbývá {n} s",
    aboutTitle: "O aplikaci dedog",
    aboutIntro: "dedog rozpoznává plemena psů na vašem vlastním počítači: tato stránka mluví jen se serverem dedog, který ji poslal.",
    aboutModel: "Model",
    aboutFile: "Soubor",
    aboutBreeds: "Plemena, která zná",
    aboutBackbones: "Sítě",
    aboutAccuracy: "Naměřená přesnost",
    aboutAccuracyNote: "Změřeno příkazem dedog train na fotkách, které se k učení nepoužily ({count} fotek z datové sady {dataset}).",
    aboutMeasure: "Měření", aboutValue: "Hodnota",
    accTop1: "správné plemeno na prvním místě (top-1)", accTop5: "správné plemeno mezi prvními pěti (top-5)",
    accBackbone: "samotná síť {name}, top-1",
    aboutNoAccuracy: "Tento model žádná měření nenese (je to základ z ImageNetu, ne model z dedog train).",
    aboutPrivacy: "Co se děje s fotkou",
    aboutPrivacyText: "Vybraná fotka se pošle na tento server, určí se v jeho paměti a zapomene se: neukládá se. Uloží se jen fotka, kterou potvrdíte jako svého psa, a ani ta ne celá, jen čísla, která ji popisují, ve vašem souboru modelu; vrácení zpět je smaže.",
    aboutLearning: "Tento server ukládá potvrzené fotky do {file}; pamatuje si jich: {count}.",
    aboutNoLearning: "Tento server potvrzené fotky neukládá (spusťte ho s --learn-model SOUBOR).",
    tokenTitle: "Přístupový klíč serveru",
    tokenText: "Tento server chce přístupový klíč. Zadejte ten, který dostal dedog serve --token; zůstane v tomto prohlížeči.",
    tokenLabel: "Klíč",
    tokenSave: "Uložit",
    err_damagedPhoto: "Fotka je poškozená a nedá se přečíst.",
    err_truncatedPhoto: "Fotka je useknutá (nedokončené stahování?).",
    err_unsupportedFormat: "Tohle není fotka, kterou dedog umí přečíst (JPEG, PNG, HEIC, AVIF nebo WebP).",
    err_emptyPhoto: "Soubor je prázdný.",
    err_tooManyPixels: "Fotka má na tento server příliš mnoho pixelů.",
    err_bodyTooLarge: "Soubor je na tento server příliš velký.",
    err_busy: "Server je zaneprázdněný; zkuste to za chvíli.",
    err_unauthorized: "Server chce přístupový klíč (viz O aplikaci).",
    err_unknownBreed: "Takové plemeno model nezná.",
    err_learningOff: "Tento server fotky neukládá.",
    err_badQuiz: "Tohle není platný soubor s kvízem dedog.",
    err_notFound: "Nenalezeno.",
    err_network: "Server dedog není dostupný.",
    err_other: "Server odpověděl chybou ({status}).",
    errorTitle: "Něco se nepovedlo",
  },
};

export const languages = Object.keys(strings);

function initialLanguage() {
  const saved = localStorage.getItem("dedog.lang");
  if (saved && strings[saved]) return saved;
  for (const tag of navigator.languages || [navigator.language || "en"]) {
    const primary = tag.toLowerCase().split("-")[0];
    if (strings[primary]) return primary;
  }
  return "en";
}

let current = initialLanguage();

export function lang() { return current; }

export function setLang(language) {
  current = strings[language] ? language : "en";
  localStorage.setItem("dedog.lang", current);
  document.documentElement.lang = current;
}

/** The string `key` in the current language with `{name}` placeholders filled in. */
export function t(key, params = {}) {
  const text = strings[current][key] ?? strings.en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (_, name) => (name in params ? String(params[name]) : `{${name}}`));
}

/** Whether the current language has a string for `key`. */
export function has(key) { return key in strings[current]; }

/** Number formats, made once per language: making one costs more than the rest of drawing an answer. */
const formats = new Map();
function format(kind, options) {
  const key = `${current} ${kind}`;
  let made = formats.get(key);
  if (!made) formats.set(key, made = new Intl.NumberFormat(current, options));
  return made;
}

/** 0.968 → "96.8 %" / "96,8 %". */
export function percent(p) {
  return format("percent", { style: "percent", minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(p);
}

/** 12.5 → "12.5" / "12,5". */
export function number(x) {
  return format("number", { maximumFractionDigits: 1 }).format(x);
}
