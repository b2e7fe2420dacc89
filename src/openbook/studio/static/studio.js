/* openbook studio: the page. Plain JavaScript, no library, nothing fetched but the studio's
   own API (/api/...). Every figure is the server's (openbook's own functions); this file only
   shows them and sends the publisher's choices. docs/studio.md describes the page. */
"use strict";
(() => {
  const $ = (sel) => document.querySelector(sel);
  let state = null;            // GET /api/state
  let step = "load";           // the step shown
  const ticked = new Set();    // runs ticked for the comparison
  let detailsRun = null;       // the run whose details are open
  let hierColumn = null;       // the column whose hierarchy panel is open
  let pollTimer = null;
  let publishNameEdited = false;
  let lastPublished = null;

  // ---- helpers ------------------------------------------------------------------------------
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "text") e.textContent = v;
      else if (k === "class") e.className = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else if (k === "value") e.value = v;
      else if (k === "checked" || k === "disabled" || k === "selected") e[k] = Boolean(v);
      else e.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined || c === false) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }
  function fmt(x, digits = 4) {
    if (x === null || x === undefined) return "–";
    if (typeof x === "boolean") return x ? "yes" : "no";
    if (typeof x !== "number") return String(x);
    if (!Number.isFinite(x)) return "–";
    if (Number.isInteger(x)) return x.toLocaleString("en-US");
    return String(parseFloat(x.toPrecision(digits)));
  }
  const pct = (x) => (x === null || x === undefined ? "–" : `${(100 * x).toFixed(1)}%`);
  function table(id, header, rows, attrs) {
    const t = id ? $(id) : el("table", { class: "grid" });
    t.replaceChildren();
    if (header) t.append(el("tr", {}, header.map((h) => el("th", { text: h }))));
    for (const r of rows) t.append(r instanceof Node ? r : el("tr", attrs || {}, r.map((c) => el("td", {}, c))));
    return t;
  }
  function banner(message, kind) {
    $("#banner").hidden = false;
    $("#banner").className = "banner" + (kind === "info" ? " info" : "");
    $("#banner-text").textContent = message;
  }
  const clearBanner = () => { $("#banner").hidden = true; };

  async function api(method, path, body, raw) {
    const opts = { method, headers: {} };
    if (raw !== undefined) { opts.body = raw; opts.headers["content-type"] = "application/octet-stream"; }
    else if (body !== undefined) { opts.body = JSON.stringify(body); opts.headers["content-type"] = "application/json"; }
    const res = await fetch(path, opts);
    let data = null;
    try { data = await res.json(); } catch (e) { data = null; }
    if (!res.ok) throw new Error((data && data.error) || `${res.status} ${res.statusText}`);
    return data;
  }
  // run an action from a button: errors go to the banner (one message), the button waits
  async function act(button, fn) {
    clearBanner();
    if (button) button.disabled = true;
    document.body.classList.add("busy");
    try { if (!state) await refresh(); await fn(); } catch (e) { banner(e.message); }
    finally { if (button) button.disabled = false; document.body.classList.remove("busy"); }
  }
  async function refresh() { state = await api("GET", "/api/state"); render(); document.body.dataset.ready = "1"; }
  function setState(s) { state = s; render(); }

  // ---- steps --------------------------------------------------------------------------------
  function show(name) {
    step = name;
    if (!$("#banner").hidden && $("#banner").classList.contains("info")) clearBanner();
    for (const b of document.querySelectorAll("#steps button")) b.classList.toggle("active", b.dataset.step === name);
    for (const s of document.querySelectorAll("section.step")) s.hidden = s.id !== `step-${name}`;
  }
  for (const b of document.querySelectorAll("#steps button")) b.addEventListener("click", () => show(b.dataset.step));
  $("#banner-close").addEventListener("click", clearBanner);

  function render() {
    if (!state) return;
    const d = state.data;
    const ch = state.choices;
    const qi = d ? Object.keys(ch.roles).filter((c) => ch.roles[c] === "qi") : [];
    const sa = d ? Object.keys(ch.roles).filter((c) => ch.roles[c] === "sa") : [];
    $("#status").textContent = d ? `${d.name} — ${fmt(d.rows)} rows · QIs: ${qi.join(", ") || "none"} · SA: ${sa[0] || "none"}`
      : "no table loaded";
    for (const b of document.querySelectorAll("#steps button")) {
      if (b.dataset.step === "measure" || b.dataset.step === "apply") b.disabled = !d;
    }
    renderLoad(); renderColumns(); renderHierarchy(); renderMeasure(); renderRuns();
    renderCompare(); renderDetails(); renderPublish();
  }

  // ---- 1. load ------------------------------------------------------------------------------
  let catalogShown = false;
  function renderLoad() {
    const c = state.catalog;
    if (!catalogShown) {
      catalogShown = true;
      $("#dataset").replaceChildren(...c.datasets.map((n) => el("option", { value: n, text: n })));
      $("#upload-limit").textContent = `CSV or Parquet, up to ${state.max_upload_mb} MB.`;
      $("#models-help").textContent = c.models_help;
      $("#skew").replaceChildren(...c.skew.map((n) => el("option", { value: n, text: n })));
      $("#algorithms").replaceChildren(...c.algorithms.map((a) => el("label", {},
        el("input", { type: "checkbox", class: "algo", value: a.name, checked: a.name === c.default_algorithm }),
        el("span", {}, el("b", { text: a.name }), ` (${a.kind})`, a.name === c.default_algorithm ? " — the default" : "",
          el("br"), el("span", { class: "line", text: a.line }),
          a.params.length ? el("span", { class: "line muted", text: ` · parameters: ${a.params.join(", ")}` }) : null))));
      $("#out-dir").textContent = state.out_dir;
      $("#default-why").textContent = `The default, ${c.default_algorithm}: ${c.default_why}.`;
    }
    const d = state.data;
    $("#declare").hidden = !d;
    $("#data-info").replaceChildren(d ? el("p", {}, el("b", { text: d.description || d.name }),
      ` — ${fmt(d.rows)} rows, ${d.columns.length} columns.`) : el("p", { class: "note", text: "Load a table to begin." }));
    if (d) {
      $("#missing").value = state.choices.missing;
      if (document.activeElement !== $("#sensitive")) $("#sensitive").value = state.choices.sensitive || "";
      table("#preview", d.preview.columns, d.preview.rows);
    }
  }
  $("#load-dataset").addEventListener("click", (e) => act(e.target, async () => {
    setState(await api("POST", "/api/load", { dataset: $("#dataset").value }));
    banner(`loaded ${state.data.name}: ${fmt(state.data.rows)} rows`, "info");
  }));
  $("#load-path").addEventListener("click", (e) => act(e.target, async () => {
    setState(await api("POST", "/api/load", { path: $("#path").value }));
    banner(`loaded ${state.data.name}: ${fmt(state.data.rows)} rows`, "info");
  }));
  $("#load-upload").addEventListener("click", (e) => act(e.target, async () => {
    const f = $("#upload").files[0];
    if (!f) throw new Error("choose a CSV or Parquet file to upload");
    if (f.size > state.max_upload_mb * 1048576) throw new Error(`refused: the file is ${(f.size / 1048576).toFixed(1)} MB, above the studio's limit of ${state.max_upload_mb} MB (give its path instead)`);
    setState(await api("POST", `/api/upload?name=${encodeURIComponent(f.name)}`, undefined, f));
    banner(`loaded ${state.data.name}: ${fmt(state.data.rows)} rows`, "info");
  }));

  const ROLES = [["qi", "QI"], ["sa", "SA"], ["identifier", "identifier"], ["keep", "kept"], ["drop", "dropped"]];
  const KINDS = ["categorical", "numeric", "ordinal"];
  function hierarchyWords(col) {
    const ch = state.choices;
    const h = ch.hierarchies[col];
    if (!h) return `automatic (${ch.kinds[col] === "numeric" ? "interval ladder" : ch.kinds[col] === "ordinal" ? "neighbour merges" : "flat: every value → *"})`;
    if (h.mode === "built") return `${h.option} — ${h.levels} level${h.levels === 1 ? "" : "s"}, e.g. ${h.example}`;
    if (h.mode === "auto") return "automatic";
    return h.description || h.mode;
  }
  async function saveColumn(name, role, kind) {
    setState(await api("POST", "/api/columns", { columns: [{ name, role, kind }] }));
  }
  function renderColumns() {
    const d = state.data;
    if (!d) return;
    const ch = state.choices;
    const rows = d.columns.map((c) => {
      const role = ch.roles[c.name];
      const used = role === "qi" || role === "sa";
      const roleSel = el("select", { class: "role", "data-column": c.name, "aria-label": `role of ${c.name}`,
        onchange: (e) => act(null, () => saveColumn(c.name, e.target.value, ch.kinds[c.name])) },
        ROLES.map(([v, t]) => el("option", { value: v, text: t, selected: v === role })));
      const kindSel = el("select", { class: "kind", "data-column": c.name, "aria-label": `kind of ${c.name}`, disabled: !used,
        onchange: (e) => act(null, () => saveColumn(c.name, role, e.target.value)) },
        KINDS.map((k) => el("option", { value: k, text: k, selected: k === ch.kinds[c.name] })));
      const hier = role === "qi" ? el("span", {}, el("span", { class: "hier", text: hierarchyWords(c.name) }), " ",
        el("button", { type: "button", class: "link hier-open", "data-column": c.name,
          onclick: () => { hierColumn = c.name; renderHierarchy(); $("#hierarchy-panel").scrollIntoView({ block: "nearest" }); } },
          "change…")) : el("span", { class: "muted", text: "–" });
      return el("tr", { "data-column": c.name, class: hierColumn === c.name ? "selected" : "" },
        el("td", {}, el("b", { text: c.name })),
        el("td", { text: `${fmt(c.values)}${c.missing ? ` (+${fmt(c.missing)} missing)` : ""}` }),
        el("td", {}, `${c.detected}`, el("br"), el("span", { class: "note", text: c.detail })),
        el("td", { class: "note", text: c.examples.join(", ") }),
        el("td", {}, roleSel), el("td", {}, kindSel), el("td", {}, hier));
    });
    table("#columns", ["column", "distinct values", "looks like", "examples", "role", "kind", "hierarchy (QIs)"], rows);
  }
  $("#missing").addEventListener("change", (e) => act(null, async () => setState(await api("POST", "/api/columns", { missing: e.target.value }))));
  $("#save-sets").addEventListener("click", (e) => act(e.target, async () => setState(await api("POST", "/api/columns", { sensitive: $("#sensitive").value }))));

  const METHODS = {
    widths: ["numbers: aligned intervals of each width, each a multiple of the one before", "5,10,20"],
    quantiles: ["numbers: N bins of about equal row counts, then fewer", "4,2"],
    prefix: ["codes such as postcodes: mask one more trailing character a level", ""],
    ordinal: ["ordinal values in their sorted order, neighbours merged pairwise", ""],
    order: ["ordinal values from lowest to highest (list every value)", "low,mid,high"],
    date: ["dates: day → month → year (or a level to start at: month, quarter, year, decade)", "day"],
  };
  function renderHierarchy() {
    const panel = $("#hierarchy-panel");
    const d = state.data;
    if (!d || !hierColumn || state.choices.roles[hierColumn] !== "qi") { panel.hidden = true; return; }
    panel.hidden = false;
    const col = hierColumn;
    const prof = d.columns.find((c) => c.name === col);
    const h = state.choices.hierarchies[col];
    const method = el("select", { id: "hier-method" }, Object.keys(METHODS).map((m) => el("option", { value: m, text: `--${m}`,
      selected: (h && h.mode === "built" ? h.method : prof.suggested_method || "widths") === m })));
    const param = el("input", { id: "hier-param", type: "text", value: h && h.mode === "built" ? h.param : (prof.suggested_param || "") });
    const help = el("span", { class: "note", id: "hier-help" });
    const setHelp = () => { help.textContent = METHODS[method.value][0]; param.placeholder = METHODS[method.value][1]; param.disabled = method.value === "prefix" || method.value === "ordinal"; };
    method.addEventListener("change", setHelp); setHelp();
    const choices = [];
    if (d.builtin_hierarchies[col]) choices.push(["builtin", "use the built-in one"]);
    choices.push(["auto", "use the automatic one"]);
    if (state.catalog.adult_columns.includes(col)) choices.push(["adult:paper001", "Adult (paper 001)"], ["adult:arx", "Adult (ARX)"]);
    const body = [
      el("h3", {}, `Hierarchy of ${col} `, el("button", { type: "button", class: "link", onclick: () => { hierColumn = null; render(); } }, "close")),
      el("p", {}, "Now: ", el("b", { text: hierarchyWords(col) }), `. Its values look like ${prof.detail} (${prof.detected}); `,
        prof.option ? `openbook hierarchy suggests ${prof.option}.` : ""),
      el("div", { class: "row" }, el("label", {}, "build with", method), el("label", { class: "grow" }, "parameter", param),
        el("button", { type: "button", id: "hier-build", class: "primary", onclick: (e) => act(e.target, async () => {
          setState(await api("POST", "/api/hierarchy", { column: col, method: method.value, param: param.value }));
          const built = state.choices.hierarchies[col];
          if (built && built.numeric && state.choices.kinds[col] !== "numeric") {
            await saveColumn(col, "qi", "numeric");
            banner(`${col}: the intervals are numbers, so ${col} is now a numeric QI (as openbook hierarchy advises: --qi ${col}:numeric)`, "info");
          }
        }) }, "Build"),
        ...choices.map(([mode, text]) => el("button", { type: "button", class: "hier-mode", "data-mode": mode,
          onclick: (e) => act(e.target, async () => setState(await api("POST", "/api/hierarchy", { column: col, mode }))) }, text))),
      help,
    ];
    if (h && h.mode === "built") {
      body.push(el("p", {}, `${h.values} values, ${h.levels} levels above them; e.g. ${h.example}. `,
        el("a", { href: `/api/hierarchy/${encodeURIComponent(col)}`, download: h.file }, `download ${h.file}`),
        " (the ARX CSV anonymize --hierarchy reads)"));
      body.push(table(null, null, h.rows.map((r) => r)));
    }
    panel.replaceChildren(...body);
  }

  // ---- 2. measure ---------------------------------------------------------------------------
  function kpi(label, value, cls, id) {
    return el("div", { class: "kpi", id }, el("b", { class: cls || "", text: value }), label);
  }
  function renderMeasure() {
    const out = $("#measure-result");
    const m = state.measure;
    if (!m) { out.replaceChildren(el("p", { class: "note", text: state.data ? "Not measured for the current declarations yet." : "" })); return; }
    const idt = m.identity;
    const th = idt.threshold;
    const kp = [
      kpi("records", fmt(idt.records)), kpi("classes (distinct QI combinations)", fmt(idt.classes)),
      kpi(`unique on their QIs (${pct(idt.sample_uniqueness)})`, fmt(idt.sample_uniques), idt.sample_uniques ? "bad" : "ok", "kpi-uniques"),
      kpi("prosecutor: highest risk", fmt(idt.prosecutor.highest_risk), idt.prosecutor.highest_risk > th ? "bad" : "ok", "kpi-prosecutor"),
      kpi(`prosecutor: records above ${fmt(th)}`, pct(idt.prosecutor.records_at_risk)),
      kpi("prosecutor: success rate", pct(idt.prosecutor.success_rate)),
      kpi("journalist: highest risk", fmt(idt.journalist.highest_risk), "", "kpi-journalist"),
      kpi(`journalist: records above ${fmt(th)}`, pct(idt.journalist.records_at_risk)),
      kpi("marketer: success rate", pct(idt.marketer.success_rate), "", "kpi-marketer"),
    ];
    const pu = idt.population_uniqueness || {};
    if (idt.population_size) {
      const est = ["zayatz", "pitman", "snb"].filter((k) => k in pu).map((k) => `${k} ${pu[k] === null ? "did not converge" : pct(pu[k])}`).join(", ");
      kp.push(kpi(`population uniques (${pu.dankar_model}, Dankar's rule; ${est})`, pct(pu.dankar)));
    }
    const levels = table(null, ["level", "value"], m.levels.map((l) => [l.label, fmt(l.value)]));
    levels.id = "levels";
    const bands = table(null, ["class size", "records", "classes", "risk"], m.bands.map((b) => [b.class_size, fmt(b.records), fmt(b.classes), b.risk]));
    out.replaceChildren(
      el("p", {}, `QIs ${m.qi.join(", ")}; SA ${m.sa}.`),
      el("div", { class: "kpis" }, kp),
      ...(idt.notes || []).map((n) => el("p", { class: "note", text: n })),
      ...(m.warnings || []).map((w) => el("p", { class: "warn", text: `warning: ${w}` })),
      el("div", { class: "two" },
        el("div", {}, el("h3", { text: "Re-identification risk of every record" }),
          el("img", { class: "histogram", id: "histogram", alt: "histogram of the records' re-identification risk", src: `/api/measure.svg?v=${m.version}` }),
          el("h3", { text: "Records by the size of their class" }), bands),
        el("div", {}, el("h3", { text: "Levels the raw table satisfies" }), levels)));
  }
  $("#measure-button").addEventListener("click", (e) => act(e.target, async () => {
    const m = await api("POST", "/api/measure", { population_size: $("#population").value, threshold: $("#threshold").value });
    state.measure = m; renderMeasure();
  }));

  // ---- 3. apply & compare -------------------------------------------------------------------
  const active = (r) => r.status === "queued" || r.status === "running";
  function runStatus(r) {
    if (r.status === "running") {
      const cur = r.steps[r.steps.length - 1];
      return el("span", { class: "steps-list" }, el("span", { class: "current", text: `running: ${cur ? cur.name : "starting"}` }),
        ` (${fmt(r.seconds)} s so far)`, el("br"), r.steps.filter((s) => s.done).map((s) => `✓ ${s.name} ${s.seconds} s`).join(" · "));
    }
    if (r.status === "failed") return el("span", { class: "bad", text: `failed: ${r.error.split("\n")[0]}` });
    if (r.status === "cancelled") return el("span", { class: "muted", text: "cancelled" });
    if (r.status === "queued") return el("span", { class: "muted", text: "queued" });
    return el("span", { text: `done in ${fmt(r.seconds)} s` });
  }
  function verdict(r) {
    if (!r.summary) return "–";
    return el("span", { class: `verdict ${r.summary.publishable ? "pass" : "fail"}`, text: r.summary.word });
  }
  function renderRuns() {
    const runs = state.runs;
    const rows = runs.slice().reverse().map((r) => el("tr", { "data-run": r.id, "data-status": r.status, class: detailsRun === r.id ? "selected" : "" },
      el("td", {}, el("input", { type: "checkbox", class: "tick", "aria-label": `compare run ${r.id}`, checked: ticked.has(r.id),
        disabled: r.status !== "done", onchange: (e) => { if (e.target.checked) ticked.add(r.id); else ticked.delete(r.id); renderCompare(); } })),
      el("td", {}, el("b", { text: `#${r.id}` }), ` ${r.algorithm}`, el("br"), el("code", { text: r.model })),
      el("td", { class: "note", text: r.data }),
      el("td", { class: "status" }, runStatus(r)),
      el("td", { class: "verdict-cell" }, verdict(r)),
      el("td", {},
        active(r) ? el("button", { type: "button", class: "cancel", onclick: (e) => act(e.target, async () => { await api("POST", `/api/runs/${r.id}/cancel`); await poll(); }) }, "cancel") : null,
        el("button", { type: "button", class: "link details", onclick: () => { detailsRun = r.id; renderRuns(); renderDetails(); $("#run-details").scrollIntoView({ block: "nearest" }); } }, "details"),
        el("button", { type: "button", class: "link restore", onclick: () => restore(r) }, "restore settings"))));
    table("#runs", ["compare", "run", "data", "progress", "verdict", ""], rows);
    if (!runs.length) $("#runs").append(el("tr", {}, el("td", { colspan: 6, class: "note", text: "No run yet: choose a model and algorithms, then Run." })));
    if (runs.some(active)) startPolling();
  }
  function restore(r) {
    $("#models").value = r.model;
    for (const b of document.querySelectorAll("input.algo")) b.checked = b.value === r.algorithm;
    const p = Object.entries(r.params).filter(([k]) => k !== "seed").map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(",") : v}`);
    $("#params").value = p.join(" ");
    $("#seed").value = r.params.seed ?? "";
    $("#max-risk").value = r.targets.max_risk ?? "";
    $("#max-reid-risk").value = r.targets.max_reid_risk ?? "";
    $("#worlds").value = r.targets.worlds ?? "";
    $("#run-population").value = r.targets.population_size ?? "";
    $("#skew").value = r.targets.skew || "none";
    act(null, async () => {
      if (state.data && state.data.name === r.data) {
        const columns = Object.keys(r.choices.roles).map((name) => ({ name, role: r.choices.roles[name], kind: r.choices.kinds[name] }));
        setState(await api("POST", "/api/columns", { columns, missing: r.choices.missing, sensitive: r.choices.sensitive }));
        banner(`the settings of run #${r.id} are back in the form, with its roles and kinds (hierarchies as they are now)`, "info");
      } else banner(`the settings of run #${r.id} are back in the form (it ran on ${r.data}; the table loaded now is kept)`, "info");
    });
  }
  $("#run-button").addEventListener("click", (e) => act(e.target, async () => {
    const algorithms = [...document.querySelectorAll("input.algo:checked")].map((b) => b.value);
    const body = { models: $("#models").value, algorithms, params: $("#params").value, seed: $("#seed").value,
      max_risk: $("#max-risk").value, max_reid_risk: $("#max-reid-risk").value, worlds: $("#worlds").value,
      population_size: $("#run-population").value, skew: $("#skew").value };
    const made = await api("POST", "/api/runs", body);
    for (const r of made.runs) ticked.add(r.id);
    await poll();
  }));
  function startPolling() { if (!pollTimer) pollTimer = setInterval(poll, 600); }
  async function poll() {
    try {
      const res = await api("GET", "/api/runs");
      state.runs = res.runs;
      if (!state.runs.some(active) && pollTimer) { clearInterval(pollTimer); pollTimer = null; }
      render();
    } catch (e) { banner(e.message); }
  }

  function compared() {
    const done = state.runs.filter((r) => r.status === "done");
    const chosen = done.filter((r) => ticked.has(r.id));
    return chosen.length ? chosen : done.slice(-6);
  }
  function advCell(a) {
    if (!a) return el("span", { class: "muted", text: "–" });
    if (a.state === "does not apply") return el("span", { class: "muted", text: "does not apply" });
    if (a.state === "could not run") return el("span", { class: "bad", text: `could not run: ${a.note}` });
    const what = a.disclosure === "identity" ? "max risk" : "max posterior";
    const tgt = a.target === null ? "" : a.target_kind === "certainty" ? " (target < 1)" : ` (target ${fmt(a.target)})`;
    return el("span", { class: a.passes ? "ok-cell" : "bad" }, `${what} ${fmt(a.max)}${tgt}`, el("br"),
      el("span", { class: "note", text: `${fmt(a.above)} above · ${fmt(a.unresolved)} unresolved${a.knows_algorithm ? " · knows the algorithm" : ""}` }));
  }
  function renderCompare() {
    const runs = compared();
    const t = $("#compare");
    if (!runs.length) { t.replaceChildren(el("tr", {}, el("td", { class: "note", text: "No finished run yet." }))); return; }
    const names = [];
    for (const r of runs) for (const a of r.summary.adversaries) if (!names.includes(a.name)) names.push(a.name);
    const row = (label, f, cls) => el("tr", { class: cls || "" }, el("th", { text: label }), runs.map((r) => el("td", {}, f(r))));
    const rows = [
      el("tr", {}, el("th", { text: "run" }), runs.map((r) => el("th", { "data-run": r.id }, `#${r.id} ${r.algorithm}`, el("br"), el("code", { text: r.model })))),
      row("verdict", (r) => verdict(r), "row-verdict"),
      row("identity", (r) => lineCell(r, "identity"), "row-identity"),
      row("sensitive value", (r) => lineCell(r, "attribute"), "row-attribute"),
      ...names.map((n) => row(`adversary: ${n}`, (r) => advCell(r.summary.adversaries.find((a) => a.name === n)), `row-adv-${n}`)),
      row("unresolved (worst adversary)", (r) => fmt(r.summary.unresolved), "row-unresolved"),
      row("information loss (0 exact – 1 all suppressed)", (r) => fmt(r.summary.utility.information_loss), "row-il"),
      row("ARE of COUNT queries (500 a setting)", (r) => areWords(r.summary.utility.are), "row-are"),
      row("classes", (r) => r.summary.classes.words, "row-classes"),
      row("suppressed rows", (r) => `${fmt(r.summary.rows.suppressed)} of ${fmt(r.summary.rows.input)}`, "row-suppressed"),
      row("release kind", (r) => r.summary.classes.kind),
      row("seconds", (r) => fmt(r.seconds)),
      row("", (r) => el("span", {},
        el("button", { type: "button", class: "link", onclick: () => { detailsRun = r.id; renderRuns(); renderDetails(); } }, "details"),
        el("a", { href: `/api/runs/${r.id}/report`, target: "_blank", rel: "noopener" }, "report"), " ",
        el("button", { type: "button", class: r.summary.publishable ? "publish-this" : "publish-this link", "data-run": r.id,
          onclick: () => { $("#publish-run").value = String(r.id); publishNameEdited = false; suggestName(); show("publish"); } },
          r.summary.publishable ? "publish this" : "why refused?"))),
    ];
    t.replaceChildren(...rows);
  }
  const areWords = (rows) => rows.map((q) => `${fmt(q.are)} (qd ${q.qd}, sel ${fmt(q.sel)})`).join(" · ");
  function lineCell(r, name) {
    const ln = r.summary.lines.find((l) => l.name === name);
    if (!ln) return "–";
    return el("span", { class: ln.passes ? "" : "bad", text: ln.text });
  }
  function settingsWords(r) {
    const params = Object.entries(r.params).map(([k, v]) => `${k} ${Array.isArray(v) ? v.join(",") : v}`);
    const names = { max_risk: "max risk", max_reid_risk: "max re-identification risk", worlds: "replay worlds", population_size: "population size", skew: "skew" };
    const targets = Object.entries(r.targets).filter(([k, v]) => v !== null && !(k === "skew" && v === "none")).map(([k, v]) => `${names[k] || k} ${v}`);
    return `parameters: ${params.join(", ") || "the algorithm's defaults"}; targets: ${targets.join(", ") || "the model's (the defaults)"}`;
  }
  function renderDetails() {
    const panel = $("#run-details");
    const r = state.runs.find((x) => x.id === detailsRun);
    if (!r) { panel.hidden = true; return; }
    panel.hidden = false;
    const ch = r.choices;
    const qi = Object.keys(ch.roles).filter((c) => ch.roles[c] === "qi");
    const parts = [
      el("h3", {}, `Run ${r.label} `, el("button", { type: "button", class: "link", onclick: () => { detailsRun = null; renderRuns(); renderDetails(); } }, "close")),
      el("p", {}, `On ${r.data}; QIs ${qi.map((c) => `${c} (${ch.kinds[c]}${ch.hierarchies[c] ? `, ${ch.hierarchies[c].option || ch.hierarchies[c].description || ch.hierarchies[c].mode}` : ""})`).join(", ")}; `,
        `SA ${Object.keys(ch.roles).find((c) => ch.roles[c] === "sa")}; ${settingsWords(r)}.`),
      el("p", {}, runStatus(r)),
    ];
    if (r.status === "failed") parts.push(el("pre", { class: "bad", text: r.error }));
    for (const w of r.warnings || []) parts.push(el("p", { class: "warn", text: `warning: ${w}` }));
    const s = r.summary;
    if (s) {
      parts.push(el("p", {}, verdict(r), " ", s.headline.replace(/^(PUBLISHABLE|REFUSED): /, "")));
      if (s.refusal) parts.push(el("p", { class: "bad refusal", text: `anonymize would refuse it (exit code 3, nothing written): ${s.refusal}` }));
      parts.push(el("p", {}, `Verified: ${s.model}, level ${fmt(s.verified_level)}; ${s.classes.words}; rows ${fmt(s.rows.published)} published, ${fmt(s.rows.suppressed)} suppressed.`));
      parts.push(el("h3", { text: "Every adversary" }));
      parts.push(table(null, ["adversary", "result", "what it found"], s.adversaries.map((a) => [`${a.title} (${a.paper})`, a.state, a.line])));
      parts.push(el("h3", { text: "Utility" }));
      parts.push(table(null, ["information loss", "NCP", "discernibility", "average class size", "suppression rate", "ARE of COUNT queries"],
        [[fmt(s.utility.information_loss), fmt(s.utility.ncp), fmt(s.utility.discernibility), fmt(s.utility.avg_class_size), pct(s.utility.suppression_rate), areWords(s.utility.are)]]));
      parts.push(el("p", { class: "note", text: `information loss per QI: ${Object.entries(s.utility.per_qi).map(([k, v]) => `${k} ${fmt(v)}`).join(", ")}` }));
      parts.push(el("h3", { text: `What would be published (first rows of ${fmt(s.preview.total)})` }));
      parts.push(el("div", { class: "scroll" }, table(null, s.preview.columns, s.preview.rows)));
      if (s.preview_sa) {
        parts.push(el("h3", { text: `SA table (first rows of ${fmt(s.preview_sa.total)})` }));
        parts.push(table(null, s.preview_sa.columns, s.preview_sa.rows));
      }
      parts.push(el("p", {}, el("a", { href: `/api/runs/${r.id}/report`, target: "_blank", rel: "noopener" }, "the full report of this run (a preview: nothing is written)")));
    }
    if (r.commands && r.commands.length) {
      parts.push(el("h3", { text: "The same on the command line" }));
      parts.push(el("pre", { class: "commands", text: r.commands.join("\n") }));
    }
    panel.replaceChildren(...parts);
  }

  // ---- 4. publish ---------------------------------------------------------------------------
  function suggestName() {
    if (publishNameEdited) return;
    const r = state.runs.find((x) => String(x.id) === $("#publish-run").value);
    if (!r) return;
    const base = `${r.data}-${r.algorithm}-run${r.id}`.replace(/[^A-Za-z0-9._-]+/g, "_").replace(/^[._]+/, "");
    $("#publish-name").value = `${base.replace(/\.(csv|tsv|txt|parquet|pq)(?=-)/, "")}.csv`;
  }
  $("#publish-run").addEventListener("change", () => { publishNameEdited = false; suggestName(); });
  $("#publish-name").addEventListener("input", () => { publishNameEdited = true; });
  function renderPublish() {
    const sel = $("#publish-run");
    const done = state.runs.filter((r) => r.status === "done");
    const keep = sel.value;
    sel.replaceChildren(...done.slice().reverse().map((r) => el("option", { value: String(r.id),
      text: `${r.label} — ${r.summary.word}` })));
    if (done.some((r) => String(r.id) === keep)) sel.value = keep;
    else {
      const best = done.slice().reverse().find((r) => r.summary.publishable);
      if (best) sel.value = String(best.id);
    }
    if (done.length) suggestName();
    $("#publish-button").disabled = !done.length;
    const rows = state.published.map((p) => el("tr", {}, el("td", { text: `#${p.run}` }),
      el("td", {}, el("ul", { class: "files" }, p.files.map((f) => el("li", { text: f })))),
      el("td", {}, el("a", { href: `/api/published/${p.index}/report`, target: "_blank", rel: "noopener" }, p.report)),
      el("td", { text: p.published_at })));
    table("#published", ["run", "files", "report", "when"], rows);
    if (!state.published.length) $("#published").append(el("tr", {}, el("td", { colspan: 4, class: "note", text: "Nothing published yet." })));
    const pb = $("#steps button[data-step=publish]");
    pb.disabled = !state.runs.length;
  }
  $("#publish-button").addEventListener("click", (e) => act(e.target, async () => {
    $("#publish-result").replaceChildren();
    const p = await api("POST", "/api/publish", { run: $("#publish-run").value, name: $("#publish-name").value,
      force: $("#publish-force").checked, publish_suppressed_count: $("#publish-counts").checked,
      publish_identifier_names: $("#publish-idents").checked });
    lastPublished = p;
    await refresh();
    $("#publish-result").replaceChildren(el("div", { class: "published" },
      el("p", {}, el("b", { text: `Published run ${p.label}` }), ` — ${fmt(p.rows)} rows (${p.kind}), read back and verified, in ${p.folder}:`),
      el("ul", { class: "files" }, p.files.map((f) => el("li", { text: f })),
        el("li", {}, el("a", { href: `/api/published/${p.index}/report`, target: "_blank", rel: "noopener", id: "published-report" }, p.report))),
      el("p", { class: "note", text: "Check it from a terminal:" }), el("pre", { text: `openbook check ${p.files[0]}` }),
      el("p", { class: "note", text: "The same on the command line:" }), el("pre", { text: p.commands.join("\n") })));
  }));

  act(null, async () => {});  // the first state (act loads it)
})();
