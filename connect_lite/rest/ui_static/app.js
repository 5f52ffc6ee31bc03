// The status page at GET /ui: polls the REST API every 2 s and keeps the DOM in step with it.
// Every URL is relative to the page (/ui), so the page works behind TLS, basic auth (the
// browser sends the page's credentials with same-origin fetches) and a path prefix.
"use strict";

(function () {
  const M = globalThis.ConnectLiteMetrics;
  const params = new URLSearchParams(window.location.search);
  const INTERVAL_MS = Math.max(250, Number(params.get("interval")) || 2000);
  const TIMEOUT_MS = 15000; // GET /health alone may take 10 s when the herder is stuck
  const SVG_NS = "http://www.w3.org/2000/svg"; // the SVG namespace name, not a URL to fetch
  const CHART_WIDTH = 240;
  const CHART_HEIGHT = 48;
  const STATES = ["RUNNING", "PAUSED", "STOPPED", "FAILED", "UNASSIGNED", "RESTARTING"];
  const number = new Intl.NumberFormat("en", { maximumFractionDigits: 1 });

  const ui = {
    heading: document.getElementById("connectors-heading"),
    connectors: document.getElementById("connectors"),
    filter: document.getElementById("filter"),
    summary: document.getElementById("summary"),
    actionStatus: document.getElementById("action-status"),
    pollError: document.getElementById("poll-error"),
    empty: document.getElementById("empty-message"),
    dialog: document.getElementById("confirm-dialog"),
    confirmText: document.getElementById("confirm-text"),
    workerInfo: document.getElementById("worker-info"),
    workerHealth: document.getElementById("worker-health"),
    lastUpdated: document.getElementById("last-updated"),
  };
  const cards = new Map(); // connector name -> card (its elements, below)
  const history = new M.History(M.WINDOW_MS, INTERVAL_MS / 2); // skips scrapes right after a click
  let polls = 0;
  let timer = null;
  let polling = false;
  let pollAgain = false;
  let workerKnown = false;
  let pendingDelete = null;
  let nextId = 0;

  // -- HTTP ------------------------------------------------------------------------------

  /** One call of the REST API; never throws. A body, if any, is sent as JSON (the worker
   * refuses any other type with 415); bodiless calls send no Content-Type. */
  async function request(method, path, body) {
    const init = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const abort = new AbortController();
    init.signal = abort.signal;
    const timeout = window.setTimeout(() => abort.abort(), TIMEOUT_MS);
    let response;
    let text = "";
    try {
      response = await fetch(path, init);
      text = await response.text();
    } catch (error) {
      const why = abort.signal.aborted ? `no answer within ${TIMEOUT_MS / 1000} s` : error.message;
      return failed(response ? response.status : 0, `the worker did not answer (${why})`);
    } finally {
      window.clearTimeout(timeout);
    }
    let json = null;
    if ((response.headers.get("Content-Type") || "").includes("json")) {
      try {
        json = JSON.parse(text);
      } catch (error) {
        json = null;
      }
    }
    if (response.ok) return { ok: true, status: response.status, json, text, message: "" };
    const message = json && typeof json.message === "string" ? json.message : response.statusText;
    return failed(response.status, `${message || "error"} (HTTP ${response.status})`, json);
  }

  function failed(status, message, json = null) {
    return { ok: false, status, json, text: "", message };
  }

  function connectorPath(name, rest = "") {
    return `connectors/${encodeURIComponent(name)}${rest}`;
  }

  // -- polling ---------------------------------------------------------------------------

  async function poll() {
    if (polling) {
      pollAgain = true;
      return;
    }
    polling = true;
    window.clearTimeout(timer);
    const started = performance.now();
    try {
      await refresh();
    } catch (error) {
      showPollError(`The page failed to update: ${error.message}`);
    } finally {
      polls += 1;
      ui.connectors.dataset.polls = String(polls);
      polling = false;
      const wait = pollAgain ? 0 : Math.max(0, INTERVAL_MS - (performance.now() - started));
      pollAgain = false;
      timer = window.setTimeout(poll, wait);
    }
  }

  async function refresh() {
    const [list, metrics, health, info] = await Promise.all([
      request("GET", "connectors?expand=status&expand=info"),
      request("GET", "metrics"),
      request("GET", "health"),
      workerKnown ? null : request("GET", "."),
    ]);
    renderWorker(info, health);
    const listed = list.json;
    if (!list.ok || listed === null || typeof listed !== "object" || Array.isArray(listed)) {
      showPollError(`Could not list connectors: ${list.message || "not a JSON object"}`);
      return;
    }
    showPollError("");
    const names = Object.keys(list.json).sort();
    history.keepOnly(names);
    if (metrics.ok) history.record(M.parsePrometheus(metrics.text), Date.now(), names);
    renderConnectors(list.json, names);
    ui.lastUpdated.textContent = new Date().toLocaleTimeString("en-GB");
    for (const card of cards.values()) {
      if (card.details.open) loadDetails(card);
    }
  }

  function showPollError(message) {
    setText(ui.pollError, message);
    ui.pollError.hidden = message === "";
  }

  function renderWorker(info, health) {
    if (info !== null && info.ok && info.json) {
      workerKnown = true;
      const { version, commit, kafka_cluster_id: cluster } = info.json;
      setText(ui.workerInfo, `version ${version}, commit ${commit}, Kafka cluster ${cluster}`);
    }
    if (health.json && typeof health.json.status === "string") {
      const text = `${health.json.status}: ${health.json.message || ""}`;
      setText(ui.workerHealth, text);
      ui.workerHealth.dataset.health = health.json.status;
    } else {
      setText(ui.workerHealth, `unknown: ${health.message}`);
      ui.workerHealth.dataset.health = "unknown";
    }
  }

  // -- connectors ------------------------------------------------------------------------

  function renderConnectors(expanded, names) {
    for (const [name, card] of cards) {
      if (Object.hasOwn(expanded, name)) continue;
      const hadFocus = card.root.contains(document.activeElement);
      card.root.remove();
      cards.delete(name);
      if (hadFocus) ui.heading.focus();
    }
    names.forEach((name, index) => {
      let card = cards.get(name);
      if (card === undefined) {
        card = createCard(name);
        cards.set(name, card);
      }
      updateCard(card, expanded[name] || {});
      const here = ui.connectors.children[index];
      if (here !== card.root) ui.connectors.insertBefore(card.root, here || null);
    });
    applyFilter();
  }

  function createCard(name) {
    const id = `connector-${nextId++}`;
    const root = make("article", { class: "connector", "data-connector": name });
    root.setAttribute("aria-labelledby", `${id}-name`);
    const header = make("div", { class: "connector-header" });
    const title = make("h3", { id: `${id}-name` }, name);
    const state = make("span", { class: "state", "data-role": "connector-state" });
    const type = make("span", { class: "type", "data-role": "connector-type" });
    const cls = make("span", { class: "class", "data-role": "connector-class" });
    header.append(title, state, type, cls);
    const meta = make("p", { class: "meta", "data-role": "connector-meta" });
    const trace = traceDetails("Connector trace", "connector-trace");
    const actions = make("div", { class: "actions", role: "group" });
    actions.setAttribute("aria-label", `Actions for ${name}`);
    actions.append(
      button("pause", "Pause", `Pause ${name}`),
      button("resume", "Resume", `Resume ${name}`),
      button("stop", "Stop", `Stop ${name}`),
      button("restart", "Restart", `Restart ${name} and its tasks`),
      button("delete", "Delete", `Delete ${name}`, "danger"),
    );
    const charts = make("div", { class: "charts" });
    const throughput = chart(name, "throughput", `${id}-throughput`);
    const errors = chart(name, "errors", `${id}-errors`);
    charts.append(throughput.figure, errors.figure);
    const tasks = tasksTable(name);
    const details = make("details", { class: "more", "data-role": "connector-details" });
    const offsets = make("div", { class: "offsets", "data-role": "offsets" }, "Loading…");
    const topics = make("div", { class: "topics", "data-role": "topics" }, "Loading…");
    details.append(
      make("summary", {}, "Offsets and active topics"),
      make("h4", {}, "Offsets"),
      offsets,
      make("h4", {}, "Active topics"),
      topics,
    );
    root.append(header, meta, trace.details, actions, charts, tasks.table, tasks.none, details);
    const card = {
      name,
      root,
      state,
      type,
      cls,
      meta,
      trace,
      throughput,
      errors,
      tasks,
      details,
      offsets,
      topics,
      filterText: name.toLowerCase(),
      busy: false,
      loading: false,
    };
    details.addEventListener("toggle", () => {
      if (details.open) loadDetails(card);
    });
    return card;
  }

  function updateCard(card, entry) {
    const status = entry.status || {};
    const connector = status.connector || {};
    const info = entry.info || {};
    const type = status.type || info.type || "unknown";
    const cls = (info.config && info.config["connector.class"]) || "";
    setState(card.state, connector.state);
    setText(card.type, type);
    setText(card.cls, cls);
    const version = connector.version ? `, version ${connector.version}` : "";
    setText(card.meta, `Worker ${connector.worker_id || "unknown"}${version}`);
    setTrace(card.trace, connector.trace);
    updateTasks(card, Array.isArray(status.tasks) ? status.tasks : []);
    updateChart(card.throughput, card.name);
    updateChart(card.errors, card.name);
    const taskStates = (Array.isArray(status.tasks) ? status.tasks : []).map((t) => t.state);
    card.filterText = [card.name, connector.state, type, cls, ...taskStates]
      .join("\n")
      .toLowerCase();
  }

  function applyFilter() {
    const terms = ui.filter.value.toLowerCase().split(/\s+/).filter(Boolean);
    let shown = 0;
    for (const card of cards.values()) {
      const visible = terms.every((term) => card.filterText.includes(term));
      card.root.hidden = !visible;
      if (visible) shown += 1;
    }
    const total = cards.size;
    ui.empty.hidden = total > 0;
    const noun = total === 1 ? "connector" : "connectors";
    setText(ui.summary, terms.length ? `Showing ${shown} of ${total} ${noun}` : `${total} ${noun}`);
  }

  // -- tasks -----------------------------------------------------------------------------

  function tasksTable(name) {
    const table = make("table", { class: "tasks" });
    const head = make("tr");
    for (const label of ["Task", "State", "Worker", "Trace", "Action"]) {
      head.append(make("th", { scope: "col" }, label));
    }
    const body = make("tbody");
    table.append(make("caption", {}, `Tasks of ${name}`), make("thead", {}, head), body);
    const none = make("p", { class: "no-tasks", "data-role": "no-tasks" }, "No tasks.");
    return { table, body, none, rows: new Map() };
  }

  function updateTasks(card, tasks) {
    const { body, rows } = card.tasks;
    const ids = new Set(tasks.map((task) => String(task.id)));
    for (const [id, row] of rows) {
      if (ids.has(id)) continue;
      if (row.root.contains(document.activeElement)) ui.heading.focus();
      row.root.remove();
      rows.delete(id);
    }
    [...tasks]
      .sort((a, b) => a.id - b.id)
      .forEach((task, index) => {
        const id = String(task.id);
        let row = rows.get(id);
        if (row === undefined) {
          row = taskRow(card.name, id);
          rows.set(id, row);
        }
        setState(row.state, task.state);
        setText(row.worker, task.worker_id || "");
        setTrace(row.trace, task.trace);
        row.noTrace.hidden = Boolean(task.trace);
        const here = body.children[index];
        if (here !== row.root) body.insertBefore(row.root, here || null);
      });
    card.tasks.table.hidden = tasks.length === 0;
    card.tasks.none.hidden = tasks.length > 0;
  }

  function taskRow(name, id) {
    const root = make("tr", { "data-task": id });
    const state = make("span", { class: "state", "data-role": "task-state" });
    const worker = make("td", { "data-role": "task-worker" });
    const trace = traceDetails("Trace", "task-trace");
    const noTrace = make("span", { class: "muted" }, "none");
    const traceCell = make("td");
    traceCell.append(trace.details, noTrace);
    const action = make("td");
    action.append(button("restart-task", "Restart", `Restart task ${id} of ${name}`));
    root.append(make("th", { scope: "row" }, id), make("td", {}, state), worker, traceCell, action);
    return { root, state, worker, trace, noTrace };
  }

  // -- states and traces -----------------------------------------------------------------

  function setState(element, state) {
    const text = typeof state === "string" ? state : "UNKNOWN";
    setText(element, text);
    element.dataset.state = STATES.includes(text) ? text.toLowerCase() : "unknown";
  }

  function traceDetails(label, role) {
    const details = make("details", { class: "trace", "data-role": role });
    const pre = make("pre");
    details.append(make("summary", {}, label), pre);
    details.hidden = true;
    return { details, pre };
  }

  function setTrace(trace, text) {
    trace.details.hidden = !text;
    setText(trace.pre, text || "");
  }

  // -- charts ----------------------------------------------------------------------------

  function chart(name, kind, id) {
    const figure = make("figure", { class: `chart chart-${kind}` });
    const svg = document.createElementNS(SVG_NS, "svg");
    attrs(svg, {
      class: "sparkline",
      "data-chart": kind,
      "data-connector": name,
      "data-points": "0",
      role: "img",
      "aria-labelledby": `${id}-title`,
      viewBox: `0 0 ${CHART_WIDTH} ${CHART_HEIGHT}`,
      width: String(CHART_WIDTH),
      height: String(CHART_HEIGHT),
    });
    const title = document.createElementNS(SVG_NS, "title");
    title.id = `${id}-title`;
    const baseline = document.createElementNS(SVG_NS, "line");
    const bottom = String(CHART_HEIGHT - 1);
    const right = String(CHART_WIDTH);
    attrs(baseline, { class: "baseline", x1: "0", x2: right, y1: bottom, y2: bottom });
    const line = document.createElementNS(SVG_NS, "polyline");
    attrs(line, { class: "line", points: "" });
    svg.append(title, baseline, line);
    const caption = make("figcaption", { "data-role": `${kind}-value` });
    figure.append(svg, caption);
    return { figure, svg, title, line, caption, kind };
  }

  function updateChart(chart, name) {
    const points = history.of(name);
    const now = points.length ? points[points.length - 1].t : Date.now();
    const field = chart.kind === "throughput" ? "rate" : "errors";
    const drawn = M.sparkline(points, field, now, CHART_WIDTH, CHART_HEIGHT);
    chart.line.setAttribute("points", drawn.points);
    chart.svg.dataset.points = String(points.length);
    const last = points.length ? points[points.length - 1] : null;
    let text;
    if (chart.kind === "throughput") {
      text = last
        ? `Throughput: ${number.format(last.rate)} records/s (peak ${number.format(drawn.max)})`
        : "Throughput: no data yet";
    } else {
      const total = points.reduce((sum, p) => sum + p.errors, 0);
      text = last
        ? `Record errors: ${number.format(total)} in the last 5 minutes`
        : "Record errors: no data yet";
    }
    setText(chart.caption, text);
    setText(chart.title, `${text}, ${name}`);
  }

  // -- offsets and topics ----------------------------------------------------------------

  async function loadDetails(card) {
    if (card.loading) return;
    card.loading = true;
    try {
      const [offsets, topics] = await Promise.all([
        request("GET", connectorPath(card.name, "/offsets")),
        request("GET", connectorPath(card.name, "/topics")),
      ]);
      renderOffsets(card, offsets);
      renderTopics(card, topics);
    } catch (error) {
      setText(card.offsets, `Could not show offsets: ${error.message}`);
    } finally {
      card.loading = false;
    }
  }

  function renderOffsets(card, answer) {
    if (!answer.ok) {
      replaceIfChanged(card.offsets, `error:${answer.message}`, () =>
        make("p", { class: "error" }, `Offsets unavailable: ${answer.message}`),
      );
      return;
    }
    const offsets = answer.json && Array.isArray(answer.json.offsets) ? answer.json.offsets : [];
    replaceIfChanged(card.offsets, answer.text, () => {
      if (offsets.length === 0) return make("p", {}, "No offsets.");
      const table = make("table", { class: "offsets-table" });
      const head = make("tr");
      head.append(
        make("th", { scope: "col" }, "Partition"),
        make("th", { scope: "col" }, "Offset"),
      );
      const body = make("tbody");
      for (const entry of offsets) {
        const row = make("tr");
        row.append(make("td", {}, json(entry.partition)), make("td", {}, json(entry.offset)));
        body.append(row);
      }
      table.setAttribute("aria-label", `Offsets of ${card.name}`);
      table.append(make("thead", {}, head), body);
      return table;
    });
  }

  function renderTopics(card, answer) {
    if (!answer.ok) {
      replaceIfChanged(card.topics, `error:${answer.message}`, () =>
        make("p", { class: "error" }, `Active topics unavailable: ${answer.message}`),
      );
      return;
    }
    const found = answer.json ? answer.json[card.name] || Object.values(answer.json)[0] : null;
    const topics = found && Array.isArray(found.topics) ? found.topics : [];
    replaceIfChanged(card.topics, answer.text, () => {
      if (topics.length === 0) return make("p", {}, "No active topics.");
      const list = make("ul", { class: "topic-list" });
      for (const topic of topics) list.append(make("li", {}, String(topic)));
      return list;
    });
  }

  /** Replaces the content of `element` only when `key` changed, so that a screen reader or a
   * selection in it is not disturbed every poll. */
  function replaceIfChanged(element, key, build) {
    if (element.dataset.key === key) return;
    element.dataset.key = key;
    element.replaceChildren(build());
  }

  function json(value) {
    return value === undefined ? "" : JSON.stringify(value);
  }

  // -- actions ---------------------------------------------------------------------------

  const ACTIONS = {
    pause: { method: "PUT", rest: "/pause", doing: "Pausing", done: "Pause requested for" },
    resume: { method: "PUT", rest: "/resume", doing: "Resuming", done: "Resume requested for" },
    stop: { method: "PUT", rest: "/stop", doing: "Stopping", done: "Stopped" },
    restart: {
      method: "POST",
      rest: "/restart?includeTasks=true&onlyFailed=false",
      doing: "Restarting",
      done: "Restart requested for",
    },
    delete: { method: "DELETE", rest: "", doing: "Deleting", done: "Deleted" },
    "restart-task": { method: "POST", doing: "Restarting", done: "Restart requested for" },
  };

  /** Runs one button's call, says what happened in the status region, then polls at once. */
  async function runAction(action, name, task) {
    const { method, doing, done } = ACTIONS[action];
    let path = connectorPath(name, ACTIONS[action].rest);
    let subject = name;
    if (action === "restart-task") {
      path = connectorPath(name, `/tasks/${encodeURIComponent(task)}/restart`);
      subject = `task ${task} of ${name}`;
    }
    announce(`${doing} ${subject}…`);
    const answer = await request(method, path);
    if (answer.ok) announce(`${done} ${subject}.`);
    else announce(`Could not ${action.replace("-task", "")} ${subject}: ${answer.message}`, true);
    poll();
  }

  function announce(message, isError = false) {
    ui.actionStatus.textContent = message;
    ui.actionStatus.classList.toggle("error", isError);
  }

  function onClick(event) {
    const target = event.target.closest("button[data-action]");
    const article = target && target.closest("article.connector");
    if (!article) return;
    const name = article.dataset.connector;
    const card = cards.get(name);
    const action = target.dataset.action;
    if (action === "delete") {
      askDelete(name);
      return;
    }
    if (!card || card.busy || !Object.hasOwn(ACTIONS, action)) return;
    const row = target.closest("tr[data-task]");
    card.busy = true;
    card.root.setAttribute("aria-busy", "true");
    runAction(action, name, row ? row.dataset.task : undefined)
      .catch((error) => announce(`Could not ${action} ${name}: ${error.message}`, true))
      .finally(() => {
        card.busy = false;
        card.root.removeAttribute("aria-busy");
      });
  }

  function askDelete(name) {
    const question =
      `Delete connector "${name}"? Its config and tasks are removed; its offsets stay.`;
    if (typeof ui.dialog.showModal !== "function") {
      if (window.confirm(question)) deleteConnector(name);
      return;
    }
    pendingDelete = name;
    ui.confirmText.textContent = question;
    ui.dialog.returnValue = "";
    ui.dialog.showModal();
  }

  function deleteConnector(name) {
    runAction("delete", name).catch((error) =>
      announce(`Could not delete ${name}: ${error.message}`, true),
    );
  }

  function onDialogClick(event) {
    const target = event.target.closest("button[data-action]");
    if (target === null) return;
    ui.dialog.close(target.dataset.action === "confirm-delete" ? "delete" : "cancel");
  }

  function onDialogClose() {
    const name = pendingDelete;
    pendingDelete = null;
    if (name !== null && ui.dialog.returnValue === "delete") deleteConnector(name);
  }

  // -- DOM helpers -----------------------------------------------------------------------

  function make(tag, attributes = {}, content) {
    const element = document.createElement(tag);
    attrs(element, attributes);
    if (content instanceof Node) element.append(content);
    else if (content !== undefined) element.textContent = content;
    return element;
  }

  function attrs(element, attributes) {
    for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
  }

  function button(action, text, label, extraClass) {
    const element = make("button", { type: "button", "data-action": action }, text);
    element.setAttribute("aria-label", label);
    if (extraClass) element.classList.add(extraClass);
    return element;
  }

  /** Sets text only when it changed: live regions and screen readers see real changes only. */
  function setText(element, text) {
    if (element.textContent !== text) element.textContent = text;
  }

  // -- start -----------------------------------------------------------------------------

  ui.connectors.addEventListener("click", onClick);
  ui.filter.addEventListener("input", applyFilter);
  ui.dialog.addEventListener("click", onDialogClick);
  ui.dialog.addEventListener("close", onDialogClose);
  applyFilter();
  poll();
})();
