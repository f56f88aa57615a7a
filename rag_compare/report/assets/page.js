// The interactive case list of a rag-compare report: filters, search, sort, anchors, j/k, case panels,
// and in served mode the review controls. Plain JavaScript, no library. Every value from data is put
// in the page as text (textContent), never as markup.
(function () {
  "use strict";
  const FACETS = ["category", "answerability", "language", "stage"];

  const PAGE_SIZE = 100;
  const SIDES = ["baseline", "candidate"];
  const OPEN_TONES = ["worse", "failed", "missing"];
  const LABELS = {
    answer_correct: ["yes", "no"],
    grounded: ["yes", "partly", "no"],
    abstention_correct: ["yes", "no"],
    retrieval_ok: ["yes", "no"],
  };

  const root = document.getElementById("cases-app");
  const block = document.getElementById("rag-compare-data");
  if (!root || !block) return;
  const data = JSON.parse(block.textContent);
  const served = data.mode === "served";
  const statusInfo = new Map(data.statuses.map((s) => [s.status, s]));
  const signalInfo = new Map(data.signals.map((s) => [s.name, s]));

  // ---- small DOM helpers -------------------------------------------------------------------------

  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === "class") node.className = value;
      else if (name === "text") node.textContent = value;
      else node.setAttribute(name, value === true ? "" : String(value));
    }
    for (const child of children) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }

  function hidden(text) {
    return el("span", { class: "visually-hidden", text: text });
  }

  function number(value, digits) {
    if (value === null || value === undefined) return "n/a";
    if (typeof value === "boolean") return value ? "true" : "false";
    return Number(value).toFixed(digits === undefined ? 3 : digits);
  }

  function signed(value) {
    if (value === null || value === undefined) return "n/a";
    return (value > 0 ? "+" : "") + Number(value).toFixed(3);
  }

  function toneOf(status) {
    const info = statusInfo.get(status);
    return info ? info.tone : "same";
  }

  // ---- where cases come from: the embedded list (static) or the server (served) ------------------

  let staticCases = [];
  let staticById = new Map();
  const haystacks = new Map();

  // The static page's cases and passage texts: gzipped JSON in base64, inflated by the browser itself.
  function unpack(packed) {
    const binary = atob(packed);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then((text) => {
      const body = JSON.parse(text);
      staticCases = body.cases;
      staticById = new Map(staticCases.map((c, i) => [c.case_id, i]));
      data.passages = body.passages;
    });
  }

  function haystack(c) {
    let text = haystacks.get(c.case_id);
    if (text === undefined) {
      const answers = SIDES.map((side) => sideAnswer(c, side) || "");
      text = [c.case_id, c.question || "", ...answers].join("\n").toLowerCase();
      haystacks.set(c.case_id, text);
    }
    return text;
  }

  function stagePhrase(stage) {
    return (data.stage_phrases && data.stage_phrases[stage]) || stage;
  }

  function movedAs(c, moved) {
    const delta = c.deltas ? c.deltas[moved.signal] : null;
    if (delta === null || delta === undefined) return false;
    return moved.direction === "up" ? delta > data.tolerance : delta < -data.tolerance;
  }

  function matches(c, state, withStatus) {
    if (withStatus && state.statuses.size && !state.statuses.has(c.status)) return false;
    for (const facet of FACETS) {
      if (state[facet] && c[facet] !== state[facet]) return false;
    }
    if (state.moved && !movedAs(c, state.moved)) return false;
    if (state.q && !haystack(c).includes(state.q.toLowerCase())) return false;
    return true;
  }

  function sortCases(cases, sort) {
    if (!sort || sort === "report") return cases;
    if (sort === "case_id") return cases.slice().sort((a, b) => (a.case_id < b.case_id ? -1 : a.case_id > b.case_id ? 1 : 0));
    const [, signal, direction] = sort.split(":");
    const sign = direction === "desc" ? -1 : 1;
    return cases.slice().sort((a, b) => {
      const x = a.deltas[signal];
      const y = b.deltas[signal];
      if (x === null || x === undefined) return y === null || y === undefined ? 0 : 1;
      if (y === null || y === undefined) return -1;
      return sign * (x - y);
    });
  }

  function staticList(state) {
    const counts = {};
    const matching = [];
    for (const c of staticCases) {
      if (!matches(c, state, false)) continue;
      counts[c.status] = (counts[c.status] || 0) + 1;
      if (!state.statuses.size || state.statuses.has(c.status)) matching.push(c);
    }
    const sorted = sortCases(matching, state.sort);
    return Promise.resolve({ cases: sorted, total: sorted.length, counts: counts, facets: staticFacets() });
  }

  let facetsCache = null;
  function staticFacets() {
    if (!facetsCache) {
      facetsCache = {};
      for (const facet of FACETS) {
        const values = new Set(staticCases.map((c) => c[facet]).filter((v) => v !== null && v !== undefined));
        facetsCache[facet] = Array.from(values).sort();
      }
    }
    return facetsCache;
  }

  function apiHeaders(write) {
    const headers = { Accept: "application/json" };
    if (data.token) headers.Authorization = "Bearer " + data.token;
    if (write) {
      const meta = document.querySelector('meta[name="csrf-token"]');
      headers["Content-Type"] = "application/json";
      if (meta) headers["X-CSRF-Token"] = meta.getAttribute("content");
    }
    return headers;
  }

  function api(path, options) {
    const write = options && options.method === "POST";
    const request = Object.assign({ headers: apiHeaders(write), credentials: "same-origin" }, options || {});
    return fetch(data.api + path, request).then((response) =>
      response.json().then((body) => {
        if (!response.ok) throw new Error(body && body.error ? body.error : "HTTP " + response.status);
        return body;
      })
    );
  }

  function servedQuery(state, page) {
    const params = new URLSearchParams();
    for (const status of state.statuses) params.append("status", status);
    for (const facet of FACETS) if (state[facet]) params.set(facet, state[facet]);
    if (state.moved) params.set("moved", state.moved.signal + ":" + state.moved.direction);
    if (state.q) params.set("q", state.q);
    if (state.sort && state.sort !== "report") params.set("sort", state.sort);
    params.set("page", String(page));
    params.set("page_size", String(PAGE_SIZE));
    return params.toString();
  }

  const details = new Map(); // case id -> CaseDetail, once read
  function detailOf(caseId) {
    if (details.has(caseId)) return Promise.resolve(details.get(caseId));
    return api("/cases/" + encodeURIComponent(caseId)).then((detail) => {
      details.set(caseId, detail);
      return detail;
    });
  }

  // ---- the controls ----------------------------------------------------------------------------

  const state = {
    statuses: new Set(),
    category: "",
    answerability: "",
    language: "",
    stage: "",
    moved: null,
    q: "",
    sort: served ? "case_id" : "report",
  };
  const view = { cases: [], total: 0, shown: 0, page: 1, current: -1, generation: 0 };

  const statusBoxes = el("fieldset", { class: "statuses" }, el("legend", { text: "Status" }));
  const countLabels = new Map();
  for (const info of data.statuses) {
    if (!info.count) continue;
    const box = el("input", { type: "checkbox", value: info.status, "data-status": info.status });
    box.addEventListener("change", () => {
      if (box.checked) state.statuses.add(info.status);
      else state.statuses.delete(info.status);
      refresh();
    });
    const count = el("span", { class: "count" });
    countLabels.set(info.status, count);
    statusBoxes.append(el("label", { class: "status-choice" }, box, " ", el("span", { class: "badge " + info.tone, text: info.status }), " ", count));
  }

  function facetSelect(facet) {
    const select = el("select", { id: "filter-" + facet, "aria-label": facet }, el("option", { value: "", text: "any " + facet }));
    select.addEventListener("change", () => {
      state[facet] = select.value;
      refresh();
    });
    return select;
  }
  const facetSelects = Object.fromEntries(FACETS.map((facet) => [facet, facetSelect(facet)]));

  const movedSignal = el("select", { id: "moved-signal", "aria-label": "signal that moved" }, el("option", { value: "", text: "any signal moved or not" }));
  for (const signal of data.signals) movedSignal.append(el("option", { value: signal.name, text: signal.name }));
  const movedDirection = el("select", { id: "moved-direction", "aria-label": "direction it moved" });
  function directionOptions() {
    const info = signalInfo.get(movedSignal.value);
    const meaning = (up) => (info ? " (" + (up === info.higher_is_better ? "better" : "worse") + ")" : "");
    const keep = movedDirection.value || "down";
    movedDirection.replaceChildren(
      el("option", { value: "down", text: "went down" + meaning(false) }),
      el("option", { value: "up", text: "went up" + meaning(true) })
    );
    movedDirection.value = keep;
  }
  directionOptions();
  function movedChanged() {
    directionOptions();
    state.moved = movedSignal.value ? { signal: movedSignal.value, direction: movedDirection.value } : null;
    refresh();
  }
  movedSignal.addEventListener("change", movedChanged);
  movedDirection.addEventListener("change", movedChanged);

  const search = el("input", { type: "search", id: "case-search", placeholder: "search ids, questions, answers", "aria-label": "search" });
  let searchTimer = 0;
  search.addEventListener("input", () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => {
      state.q = search.value.trim();
      refresh();
    }, 150);
  });

  const sort = el("select", { id: "case-sort", "aria-label": "sort" });
  if (!served) sort.append(el("option", { value: "report", text: "status, then case id" }));
  sort.append(el("option", { value: "case_id", text: "case id" }));
  for (const signal of data.signals) {
    sort.append(el("option", { value: "delta:" + signal.name + ":asc", text: signal.name + " delta, lowest first" }));
    sort.append(el("option", { value: "delta:" + signal.name + ":desc", text: signal.name + " delta, highest first" }));
  }
  sort.value = state.sort;
  sort.addEventListener("change", () => {
    state.sort = sort.value;
    refresh();
  });

  const reset = el("button", { type: "button", id: "clear-filters", text: "Clear filters" });
  reset.addEventListener("click", () => {
    clearFilters();
    refresh();
  });

  const summaryLine = el("p", { class: "muted", id: "shown-count", role: "status" });
  const list = el("ol", { class: "case-list", id: "case-list" });
  const more = el("button", { type: "button", id: "show-more", hidden: true });
  more.addEventListener("click", () => showMore());

  const toolbar = el(
    "div",
    { class: "toolbar" },
    statusBoxes,
    el("div", { class: "filters" }, ...FACETS.map((facet) => facetSelects[facet]), movedSignal, movedDirection, search, sort, reset)
  );
  const help = el("p", { class: "muted keys", text: "Keys: j next case, k previous case. A case's address (#case=…) opens it." });
  root.replaceChildren(toolbar, help, summaryLine, list, more);

  function clearFilters() {
    state.statuses.clear();
    for (const box of statusBoxes.querySelectorAll("input")) box.checked = false;
    for (const facet of Object.keys(facetSelects)) {
      state[facet] = "";
      facetSelects[facet].value = "";
    }
    state.moved = null;
    movedSignal.value = "";
    state.q = "";
    search.value = "";
  }

  function fillFacets(facets) {
    for (const [facet, select] of Object.entries(facetSelects)) {
      const values = (facets && facets[facet]) || [];
      if (select.options.length - 1 === values.length) continue;
      const keep = select.value;
      select.replaceChildren(select.options[0]);
      for (const value of values) select.append(el("option", { value: value, text: facet === "stage" ? stagePhrase(value) : value }));
      select.value = keep;
    }
  }

  // ---- the list ----------------------------------------------------------------------------------

  function refresh() {
    const generation = ++view.generation;
    const listed = served ? api("/cases?" + servedQuery(state, 1)) : staticList(state);
    return listed.then((result) => {
      if (generation !== view.generation) return;
      view.cases = result.cases;
      view.total = result.total;
      view.page = 1;
      view.shown = 0;
      view.current = -1;
      list.replaceChildren();
      fillFacets(result.facets);
      for (const [status, label] of countLabels) {
        const count = result.counts[status] || 0;
        const info = statusInfo.get(status);
        label.textContent = served ? String(count) : count + " of " + info.listed;
      }
      showMore(true);
    }, failed);
  }

  function failed(error) {
    summaryLine.textContent = "Could not load the cases: " + error.message;
  }

  function showMore(first) {
    const step = () => {
      const start = view.shown;
      const end = served ? view.cases.length : Math.min(view.cases.length, start + PAGE_SIZE);
      const fragment = document.createDocumentFragment();
      for (let i = start; i < end; i++) fragment.append(caseItem(view.cases[i], i));
      list.append(fragment);
      view.shown = end;
      const left = view.total - view.shown;
      summaryLine.textContent = "Showing " + view.shown + " of " + view.total + " matching cases" + leftOutText() + ".";
      more.hidden = left <= 0;
      more.textContent = "Show " + Math.min(left, PAGE_SIZE) + " more (" + left + " left)";
    };
    if (first || !served) return Promise.resolve(step());
    return api("/cases?" + servedQuery(state, view.page + 1)).then((result) => {
      view.page += 1;
      view.cases = view.cases.concat(result.cases);
      step();
    }, failed);
  }

  function leftOutText() {
    if (served) return "";
    const left = data.statuses.filter((s) => s.count > s.listed).reduce((sum, s) => sum + s.count - s.listed, 0);
    return left ? " (" + left + " more cases are not in this page: see the counts above)" : "";
  }

  function caseItem(c, index) {
    const tone = toneOf(c.status);
    const summary = el(
      "summary",
      {},
      el("span", { class: "badge " + tone, text: c.status }),
      " ",
      el("code", { class: "case-id", text: c.case_id }),
      c.stage && c.stage !== "failure" ? el("span", { class: "tag stage", "data-stage": c.stage, text: " " + stagePhrase(c.stage) }) : null,
      c.reasons && c.reasons.length ? el("span", { class: "summary-reasons", text: " " + c.reasons.join("; ") }) : null,
      c.review && c.review.reviewed ? el("span", { class: "tag reviewed", text: " ✓ reviewed" }) : null
    );
    const item = el("details", { class: "case", "data-case-id": c.case_id, "data-index": index }, summary);
    item.addEventListener("toggle", () => {
      if (item.open) fillCase(item, c.case_id);
    });
    summary.addEventListener("click", () => {
      if (!item.open) follow(c.case_id, index);
    });
    if (!served && OPEN_TONES.includes(tone)) {
      item.open = true;
      fillCase(item, c.case_id);
    }
    return el("li", {}, item);
  }

  function fillCase(item, caseId) {
    if (item.dataset.filled) return;
    item.dataset.filled = "1";
    if (!served) {
      item.append(casePanel(staticCases[staticById.get(caseId)]));
      return;
    }
    const body = el("div", { class: "case-body", text: "Loading…" });
    item.append(body);
    detailOf(caseId).then(
      (detail) => body.replaceWith(casePanel(detail)),
      (error) => (body.textContent = "Could not load this case: " + error.message)
    );
  }

  function follow(caseId, index) {
    view.current = index;
    markCurrent();
    try {
      history.replaceState(null, "", "#case=" + encodeURIComponent(caseId));
    } catch (error) {
      // a page without an address of its own (a notebook's frame) keeps none
    }
  }

  function markCurrent() {
    for (const node of list.querySelectorAll("details.current")) node.classList.remove("current");
    const item = itemAt(view.current);
    if (item) item.classList.add("current");
  }

  function itemAt(index) {
    return list.querySelector('details[data-index="' + index + '"]');
  }

  // ---- moving: anchors and j/k -------------------------------------------------------------------

  function openAt(index) {
    const reveal = () => {
      const item = itemAt(index);
      if (!item) return;
      item.open = true;
      follow(item.dataset.caseId, index);
      item.scrollIntoView({ block: "start" });
      item.querySelector("summary").focus({ preventScroll: true });
    };
    if (index < view.shown) return Promise.resolve(reveal());
    return showMore().then(() => (index < view.shown ? reveal() : undefined));
  }

  function openCase(caseId) {
    const found = view.cases.findIndex((c) => c.case_id === caseId);
    if (found >= 0) return openAt(found);
    if (!served) {
      if (!staticById.has(caseId)) return Promise.resolve(notListed(caseId));
      clearFilters();
      return refresh().then(() => openAt(view.cases.findIndex((c) => c.case_id === caseId)));
    }
    return api("/cases/" + encodeURIComponent(caseId)).then((detail) => {
      details.set(caseId, detail);
      view.cases.unshift(detail);
      view.total += 1;
      list.prepend(caseItem(detail, -1));
      for (const [i, node] of Array.from(list.querySelectorAll("details.case")).entries()) node.dataset.index = i;
      view.shown += 1;
      return openAt(0);
    }, (error) => notListed(caseId, error.message));
  }

  function notListed(caseId, why) {
    summaryLine.textContent = "Case " + caseId + " is not in this page" + (why ? ": " + why : " (it was not listed: see the counts above).");
  }

  function fromAddress() {
    const match = /^#case=(.*)$/.exec(location.hash);
    if (!match) return;
    let caseId;
    try {
      caseId = decodeURIComponent(match[1]);
    } catch (error) {
      return;
    }
    const current = itemAt(view.current);
    if (current && current.dataset.caseId === caseId && current.open) return;
    openCase(caseId);
  }

  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target;
    if (target && (target.isContentEditable || ["INPUT", "SELECT", "TEXTAREA"].includes(target.tagName))) return;
    if (event.key !== "j" && event.key !== "k") return;
    const next = view.current + (event.key === "j" ? 1 : -1);
    if (next < 0 || next >= view.total) return;
    event.preventDefault();
    openAt(next);
  });
  window.addEventListener("hashchange", fromAddress);

  // ---- a case's panel ----------------------------------------------------------------------------

  function sideAnswer(c, side) {
    const s = c.sides ? c.sides[side] : null;
    return s && s.answer !== null && s.answer !== undefined ? s.answer : null;
  }

  function casePanel(d) {
    const facts = el("dl", {});
    const fact = (term, value) => facts.append(el("dt", { text: term }), el("dd", {}, value));
    fact("question", el("span", { class: "data", text: d.question === null ? "unknown" : d.question }));
    fact("acceptance note", d.acceptance_note ? el("span", { class: "data", text: d.acceptance_note }) : el("span", { class: "muted", text: "none" }));
    const labels = el("span", {});
    for (const label of [d.answerability, d.category, d.language].filter((v) => v)) labels.append(el("span", { class: "data", text: label }), " · ");
    labels.append("source ", d.source_version ? el("span", { class: "data", text: d.source_version }) : "unknown");
    fact("labels", labels);
    const required = d.required_passage_ids || [];
    fact("required passages", required.length ? passageIds(required) : el("span", { class: "muted", text: "none" }));
    if (d.stage) fact("where it changed", el("span", { class: "data", text: stagePhrase(d.stage) }));
    if (d.reasons && d.reasons.length) {
      const stages = d.reason_stages || [];
      const reasons = d.reasons.map((r, i) => el("li", {}, stages[i] ? el("span", { class: "muted", text: stages[i] + ": " }) : null, r));
      fact("reasons", el("ul", { class: "reasons" }, ...reasons));
    }
    const moved = Object.entries(d.deltas || {}).filter(([, v]) => v !== null && v !== undefined && Math.abs(v) > data.tolerance);
    if (moved.length) fact("deltas", el("span", {}, moved.map(([name, v]) => name + " " + signed(v)).join(" · ")));
    if (d.preference && d.preference.preferred) {
      fact("pairwise judge", el("span", { class: "data" }, el("strong", { text: d.preference.preferred }), d.preference.reason ? ": " + d.preference.reason : ""));
    }
    const panel = el("div", { class: "case-body" }, facts, answerNote(d));
    const identical = answersIdentical(d);
    if (identical) {
      const answer = sideAnswer(d, "baseline");
      const ranges = unsupportedRanges(answer, d.sides.candidate.claims);
      panel.append(el("p", { class: "label", text: "answer (identical on both sides)" }), el("blockquote", { class: "answer data" }, ...marked(answer, 0, ranges, unsupportedMark)));
    }
    panel.append(el("div", { class: "sides" }, ...SIDES.map((side) => sidePanel(d, side, identical))));
    if (served && data.review) panel.append(reviewPanel(d));
    return panel;
  }

  function passageIds(ids) {
    const span = el("span", {});
    ids.forEach((id, i) => {
      if (i) span.append(", ");
      span.append(el("code", { text: id }));
    });
    return span;
  }

  function answersIdentical(d) {
    const diff = d.answer_diff;
    return !!diff && diff.length === 1 && diff[0][0] === "=" && sideAnswer(d, "baseline") !== null;
  }

  function answerNote(d) {
    const both = SIDES.every((side) => sideAnswer(d, side) !== null);
    if (!both) return null;
    if (answersIdentical(d)) return el("p", { class: "note", text: "The two answers are identical." });
    if (!d.answer_diff) return el("p", { class: "note", text: "The answers are too long to compare word by word (over " + data.max_diff_words + " words); both are shown as they are." });
    return el("p", { class: "note", text: "Answers compared word by word: words only the baseline has are struck through, words only the candidate has are underlined." });
  }

  function diffedAnswer(d, side) {
    const keep = side === "baseline" ? "-" : "+";
    const quote = el("blockquote", { class: "answer data diffed" });
    const ranges = unsupportedRanges(sideAnswer(d, side), d.sides[side].claims);
    let at = 0; // where the side's answer is, in UTF-16 units
    for (const [op, text] of d.answer_diff) {
      if (op !== "=" && op !== keep) continue;
      const pieces = marked(text, at, ranges, unsupportedMark);
      at += text.length;
      if (op === "=") quote.append(...pieces);
      else if (op === "-") quote.append(el("del", {}, hidden("[deleted: "), ...pieces, hidden("]")));
      else quote.append(el("ins", {}, hidden("[inserted: "), ...pieces, hidden("]")));
    }
    return quote;
  }

  // ---- claims: each side's verdicts, its unsupported claims marked in the answer, evidence in the context ----

  const CHANGE_NAMES = { became_unsupported: "became unsupported", became_supported: "became supported", dropped: "dropped", added: "added" };

  function marked(text, offset, ranges, make) {
    // ``text``, which starts at ``offset`` of a longer text, as pieces: the parts inside ``ranges`` ([start, end,
    // title], sorted, apart, in that longer text's units) made by ``make``, the rest as plain text.
    const pieces = [];
    let at = 0;
    for (const [start, end, title] of ranges) {
      const from = Math.max(start - offset, at);
      const to = Math.min(end - offset, text.length);
      if (to <= from) continue;
      if (from > at) pieces.push(text.slice(at, from));
      pieces.push(make(text.slice(from, to), title));
      at = to;
    }
    if (at < text.length) pieces.push(text.slice(at));
    return pieces;
  }

  function unsupportedRanges(answer, claims) {
    // Where each unsupported claim is in the answer, as written (a claim the judge reworded is only listed).
    const ranges = [];
    let from = 0;
    for (const claim of claims || []) {
      const at = answer && claim.text ? answer.indexOf(claim.text, from) : -1;
      if (at < 0) continue;
      if (claim.supported === false) ranges.push([at, at + claim.text.length, "unsupported: " + claim.text]);
      from = at + claim.text.length;
    }
    return ranges;
  }

  function unsupportedMark(text, title) {
    return el("mark", { class: "unsupported", title: title }, hidden("[unsupported: "), text, hidden("]"));
  }

  function evidenceRanges(context, claims) {
    // The evidence spans of the claims (character offsets, made UTF-16 units), sorted, overlaps merged.
    const units = codePointUnits(context || "");
    const spans = (claims || [])
      .filter((claim) => claim.start !== null && claim.start !== undefined && claim.end !== null && claim.end !== undefined)
      .map((claim) => [units(claim.start), units(claim.end), (claim.supported === false ? "contradicts or lacks: " : "evidence of: ") + claim.text])
      .sort((a, b) => a[0] - b[0]);
    const merged = [];
    for (const span of spans) {
      const last = merged[merged.length - 1];
      if (last && span[0] < last[1]) {
        last[1] = Math.max(last[1], span[1]);
        last[2] += "; " + span[2];
      } else merged.push(span.slice());
    }
    return merged;
  }

  function codePointUnits(text) {
    // A character offset (as Python counts) as an offset in UTF-16 units (as JavaScript counts).
    if (!/[\uD800-\uDFFF]/.test(text)) return (offset) => offset;
    const units = [0];
    for (const char of text) units.push(units[units.length - 1] + char.length);
    return (offset) => units[Math.min(offset, units.length - 1)];
  }

  function evidenceMark(text, title) {
    return el("mark", { class: "evidence", title: title }, hidden("[evidence: "), text, hidden("]"));
  }

  function claimsList(d, side) {
    const claims = d.sides[side].claims;
    const label = el("p", { class: "label", text: "claims (as the judge read them)" });
    if (claims === null || claims === undefined) return el("div", { class: "claims" }, label, el("p", { class: "muted", text: "not available" }));
    if (!claims.length) return el("div", { class: "claims" }, label, el("p", { class: "muted", text: "none" }));
    const changed = new Map();
    for (const change of d.claim_changes || []) if (change[side]) changed.set(change[side].text, change.change);
    const items = claims.map((claim) => {
      const verdict = claim.supported === true ? ["supported", "✓ supported"] : claim.supported === false ? ["unsupported", "✗ unsupported"] : ["unjudged", "? not judged"];
      const change = changed.get(claim.text);
      return el(
        "li",
        { class: "claim " + verdict[0] },
        el("span", { class: "tag verdict", text: verdict[1] }),
        " ",
        el("span", { class: "data", text: claim.text }),
        change ? el("span", { class: "tag change " + change, text: " · " + CHANGE_NAMES[change] }) : null,
        claim.passage_id ? el("span", { class: "muted" }, " · in ", el("code", { text: claim.passage_id })) : null,
        claim.cited ? el("span", { class: "muted cited" }, " · cited: ", el("span", { class: "data", text: claim.cited })) : null
      );
    });
    return el("div", { class: "claims" }, label, el("ul", { class: "claims" }, ...items));
  }

  function sidePanel(d, side, identical) {
    const s = d.sides[side];
    const section = el("section", { class: "side side-" + side });
    if (!s || !s.present) {
      section.append(el("h4", { text: side + " · no record" }), el("p", { class: "muted", text: "This run has no record of the case." }));
      return section;
    }
    section.append(el("h4", { text: side + " · " + (s.status || "unknown") }));
    if (s.error || s.failed_stage) {
      section.append(el("p", { class: "error" }, el("strong", { text: "failed" + (s.failed_stage ? " at " + s.failed_stage : "") + ": " }), el("span", { class: "data", text: s.error || "no error recorded" })));
    }
    if (s.judge_error) section.append(el("p", { class: "error" }, el("strong", { text: "judging failed: " }), el("span", { class: "data", text: s.judge_error })));
    section.append(usage(s));
    if (!identical && s.answer !== null && s.answer !== undefined) {
      const diffable = d.answer_diff && SIDES.every((other) => sideAnswer(d, other) !== null);
      const plain = () => el("blockquote", { class: "answer data" }, ...marked(s.answer, 0, unsupportedRanges(s.answer, s.claims), unsupportedMark));
      section.append(el("p", { class: "label", text: "answer" }), diffable ? diffedAnswer(d, side) : plain());
    }
    if (s.answer !== null && s.answer !== undefined) section.append(claimsList(d, side));
    section.append(signalsTable(s.signals || {}));
    section.append(passagesList(s.passages));
    section.append(contextBlock(s));
    return section;
  }

  function usage(s) {
    const parts = [];
    parts.push("latency " + (s.latency_ms === null || s.latency_ms === undefined ? "n/a" : Math.round(s.latency_ms) + " ms"));
    parts.push("prompt tokens " + (s.prompt_tokens === null || s.prompt_tokens === undefined ? "n/a" : s.prompt_tokens));
    parts.push("completion tokens " + (s.completion_tokens === null || s.completion_tokens === undefined ? "n/a" : s.completion_tokens));
    return el("p", { class: "usage muted", text: parts.join(" · ") });
  }

  function signalsTable(signals) {
    const body = el("tbody", {});
    for (const [name, value] of Object.entries(signals)) body.append(el("tr", {}, el("td", { text: name }), el("td", { class: "num", text: number(value) })));
    return el("table", { class: "signals" }, body);
  }

  function passagesList(passages) {
    if (passages === null || passages === undefined) return el("p", { class: "muted", text: "retrieved: not recorded" });
    const items = passages.map((p) => {
      const marks = el("span", { class: "marks" });
      if (p.gold) marks.append(el("span", { class: "tag gold-tag", text: "required" }));
      const reached = p.in_context === true ? ["yes", "✓ reached the context"] : p.in_context === false ? ["no", "✗ not in the context"] : ["unknown", "? context unknown"];
      marks.append(el("span", { class: "tag reached " + reached[0], text: reached[1] }));
      const head = el("div", { class: "passage-head" }, el("code", { text: p.passage_id }), " ", el("span", { class: "muted", text: "score " + number(p.score) }), " ", marks);
      const text = passageText(p);
      return el("li", { class: p.gold ? "gold" : null, value: p.rank }, head, text === null ? el("p", { class: "muted", text: "text unknown" }) : el("p", { class: "passage-text data", text: text }));
    });
    return el("div", {}, el("p", { class: "label", text: "retrieved passages (rank, score, text)" }), items.length ? el("ol", { class: "passages" }, ...items) : el("p", { class: "muted", text: "nothing retrieved" }));
  }

  function passageText(p) {
    if (p.text !== null && p.text !== undefined) return p.text;
    if (data.passages && Object.prototype.hasOwnProperty.call(data.passages, p.passage_id)) return data.passages[p.passage_id];
    return null;
  }

  function contextBlock(s) {
    const wrap = el("div", {}, el("p", { class: "label", text: "context as sent (required passages highlighted, the claims' evidence marked)" }));
    const segments = s.context_segments;
    const evidence = evidenceRanges(s.context, s.claims);
    if (segments === null || segments === undefined) {
      if (s.context === null || s.context === undefined) wrap.append(el("p", { class: "muted", text: "context: not recorded" }));
      else wrap.append(el("pre", { class: "context data" }, ...marked(s.context, 0, evidence, evidenceMark)));
    } else {
      const pre = el("pre", { class: "context data" });
      let at = 0;
      for (const segment of segments) {
        const pieces = marked(segment.text, at, evidence, evidenceMark);
        at += segment.text.length;
        if (!segment.passage_id) {
          pre.append(...pieces);
          continue;
        }
        pre.append(el("mark", { class: "required", title: "required passage " + segment.passage_id }, hidden("[required " + segment.passage_id + ": "), ...pieces, hidden("]")));
        if (segment.cut) pre.append(el("span", { class: "cut", text: " ✂ cut: " + segment.passage_id + " continues beyond the context " }));
      }
      wrap.append(pre);
    }
    const missing = s.missing_from_context || [];
    if (missing.length) wrap.append(el("p", { class: "error" }, "not in the context sent: ", passageIds(missing)));
    return wrap;
  }

  // ---- review controls (served mode) -----------------------------------------------------------

  function reviewPanel(d) {
    const section = el("section", { class: "review" }, el("h4", { text: "Your verdict" }));
    section.append(...SIDES.map((side) => verdictForm(d, side)));
    section.append(historyList("Verdicts on this comparison", d.verdicts || [], false));
    if (d.other_verdicts && d.other_verdicts.length) section.append(historyList("Verdicts given on other runs (not counted here)", d.other_verdicts, true));
    return section;
  }

  function choice(name, values, blank) {
    const select = el("select", { name: name, "aria-label": name });
    if (blank) select.append(el("option", { value: "", text: blank }));
    for (const value of values) select.append(el("option", { value: value, text: value }));
    return select;
  }

  function verdictForm(d, side) {
    const form = el("div", { class: "verdict-form", "data-side": side }, el("p", { class: "label", text: side + "'s answer" }));
    const agree = choice("agree", ["yes", "no"], null);
    const status = choice("status", data.case_statuses, "the status it should have");
    status.hidden = true;
    agree.addEventListener("change", () => (status.hidden = agree.value !== "no"));
    form.append(el("label", {}, "agree with " + d.status + "? ", agree), " ", status);
    const labels = {};
    for (const [name, values] of Object.entries(LABELS)) {
      labels[name] = choice(name, values, "—");
      form.append(el("label", { class: "review-label" }, name + " ", labels[name]));
    }
    const reviewer = el("input", { type: "text", name: "reviewer", value: data.reviewer || "", placeholder: "reviewer", "aria-label": "reviewer" });
    const comment = el("textarea", { name: "comment", rows: 2, placeholder: "comment", "aria-label": "comment" });
    const send = el("button", { type: "button", text: "Save verdict" });
    const said = el("p", { class: "muted", role: "status" });
    send.addEventListener("click", () => {
      const body = {
        side: side,
        agree: agree.value === "yes",
        status: agree.value === "no" ? status.value || null : null,
        labels: Object.fromEntries(Object.entries(labels).map(([name, select]) => [name, select.value || null])),
        comment: comment.value,
      };
      if (reviewer.value.trim()) body.reviewer = reviewer.value.trim();
      send.disabled = true;
      api("/cases/" + encodeURIComponent(d.case_id) + "/verdicts", { method: "POST", body: JSON.stringify(body) }).then(
        () => {
          said.textContent = "Saved.";
          details.delete(d.case_id);
          return reopen(d.case_id).then(updateProgress);
        },
        (error) => {
          said.textContent = "Not saved: " + error.message;
          send.disabled = false;
        }
      );
    });
    form.append(el("div", {}, reviewer), comment, el("div", {}, send), said);
    return form;
  }

  function reopen(caseId) {
    const item = list.querySelector('details[data-case-id="' + CSS.escape(caseId) + '"]');
    if (!item) return Promise.resolve();
    return detailOf(caseId).then((detail) => {
      const body = item.querySelector(".case-body");
      if (body) body.replaceWith(casePanel(detail));
    });
  }

  function historyList(title, verdicts, others) {
    const wrap = el("div", { class: "history" + (others ? " others" : "") }, el("p", { class: "label", text: title }));
    if (!verdicts.length) {
      wrap.append(el("p", { class: "muted", text: "none yet" }));
      return wrap;
    }
    const items = verdicts.map((v) => {
      const labels = Object.entries(v.labels || {}).filter(([, value]) => value !== null).map(([name, value]) => name + " " + value);
      const line = [v.created_at, v.reviewer, v.side, v.agree ? "agrees with " + v.shown_status : "says " + v.status + ", not " + v.shown_status].concat(labels).join(" · ");
      return el("li", { class: "verdict" }, el("span", { text: line }), v.comment ? el("p", { class: "data comment", text: v.comment }) : null, others ? el("span", { class: "tag", text: " other runs" }) : null);
    });
    wrap.append(el("ul", {}, ...items));
    return wrap;
  }

  const progress = el("p", { class: "progress", id: "review-progress", role: "status" });
  function updateProgress() {
    return api("/progress").then((p) => (progress.textContent = "Reviewed " + p.reviewed + " of " + p.queued + " queued cases."), failed);
  }

  if (served && data.review) {
    const next = el("button", { type: "button", id: "next-to-review", text: "Next case to review" });
    next.addEventListener("click", () => {
      const current = itemAt(view.current);
      const after = current ? "?after=" + encodeURIComponent(current.dataset.caseId) : "";
      api("/queue/next" + after).then((item) => {
        if (item.case_id === null) progress.textContent = "Nothing left to review.";
        else openCase(item.case_id);
      }, failed);
    });
    toolbar.prepend(el("div", { class: "review-bar" }, next, " ", progress));
    updateProgress();
  }

  const loaded = served ? Promise.resolve() : unpack(data.packed);
  loaded.then(refresh).then(fromAddress, failed);
})();
