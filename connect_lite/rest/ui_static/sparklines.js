// The status page's arithmetic, without the DOM: parse GET /metrics (Prometheus text format),
// turn successive scrapes into per-connector throughput and error counts, and lay out a
// sparkline. In the browser it defines globalThis.ConnectLiteMetrics for app.js (and for
// tests/integration/test_status_page_sparklines.py); under Node it is a CommonJS module.
"use strict";

(function () {
  /** Counters of records a task has handed on: written to Kafka (source) or to put() (sink). */
  const RECORD_COUNTERS = [
    "kafka_connect_source_task_metrics_source_record_write_total",
    "kafka_connect_sink_task_metrics_sink_record_send_total",
  ];
  /** Records that failed after retries (Kafka's task-error-metrics total-record-errors). */
  const ERROR_COUNTERS = ["kafka_connect_task_error_metrics_total_record_errors"];
  const WINDOW_MS = 5 * 60 * 1000;
  /** Scrapes closer together than this (a poll right after a button's call) are skipped: a
   * rate over a few milliseconds is mostly noise. Half the page's default poll interval. */
  const MIN_INTERVAL_MS = 1000;

  /** Every sample of a Prometheus text exposition: [{name, labels, value}]. Comments, blank
   * lines and lines it cannot read are skipped. */
  function parsePrometheus(text) {
    const samples = [];
    for (const raw of String(text || "").split("\n")) {
      const line = raw.trim();
      if (line === "" || line.startsWith("#")) continue;
      const sample = parseLine(line);
      if (sample !== null) samples.push(sample);
    }
    return samples;
  }

  function parseLine(line) {
    const match = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
    if (match === null) return null;
    const name = match[0];
    let labels = {};
    let rest = line.slice(name.length);
    if (rest.startsWith("{")) {
      const parsed = parseLabels(rest);
      if (parsed === null) return null;
      labels = parsed.labels;
      rest = rest.slice(parsed.length);
    }
    const value = parseValue(rest.trim().split(/\s+/)[0]);
    return value === null ? null : { name, labels, value };
  }

  /** The labels of `{a="x",b="y\"z"}` and how many characters they take. */
  function parseLabels(text) {
    const labels = {};
    let i = 1;
    for (;;) {
      while (text[i] === " " || text[i] === ",") i++;
      if (text[i] === "}") return { labels, length: i + 1 };
      const key = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(text.slice(i));
      if (key === null) return null;
      i += key[0].length;
      while (text[i] === " ") i++;
      if (text[i] !== "=") return null;
      i++;
      while (text[i] === " ") i++;
      if (text[i] !== '"') return null;
      i++;
      let value = "";
      while (i < text.length && text[i] !== '"') {
        if (text[i] === "\\" && i + 1 < text.length) {
          value += text[i + 1] === "n" ? "\n" : text[i + 1];
          i += 2;
        } else {
          value += text[i];
          i++;
        }
      }
      if (text[i] !== '"') return null;
      i++;
      labels[key[0]] = value;
    }
  }

  function parseValue(text) {
    if (text === undefined || text === "") return null;
    if (text === "+Inf" || text === "Inf") return Infinity;
    if (text === "-Inf") return -Infinity;
    if (text === "NaN") return NaN;
    const value = Number(text);
    return Number.isNaN(value) ? null : value;
  }

  /** How much a counter grew since the last scrape. A task restarted in between starts from
   * zero (a smaller value), and a task that appeared since then counted everything it has
   * in between. */
  function increase(previous, current) {
    if (previous === undefined) return current;
    return current >= previous ? current - previous : current;
  }

  /** Per-connector points over the last five minutes, from successive scrapes:
   * {t: epoch ms, rate: records per second, errors: record errors since the last point}. */
  class History {
    constructor(windowMs = WINDOW_MS, minIntervalMs = MIN_INTERVAL_MS) {
      this.windowMs = windowMs;
      this.minIntervalMs = minIntervalMs;
      this.previous = null; // series key -> counter value at the last scrape
      this.previousAt = null;
      this.points = new Map(); // connector -> [point]
    }

    /** Adds one point for each of `connectors` from the samples of a scrape taken at `now`.
     * The first scrape only sets the baseline; one too soon after the last is skipped. A
     * connector without task metrics (stopped, paused, or no tasks) gets zeros. */
    record(samples, now, connectors) {
      if (this.previousAt !== null && now - this.previousAt < this.minIntervalMs) return;
      const current = new Map();
      const growth = new Map(connectors.map((name) => [name, { records: 0, errors: 0 }]));
      for (const sample of samples) {
        const kind = RECORD_COUNTERS.includes(sample.name)
          ? "records"
          : ERROR_COUNTERS.includes(sample.name)
            ? "errors"
            : null;
        const connector = sample.labels.connector;
        if (kind === null || connector === undefined || !Number.isFinite(sample.value)) continue;
        const key = [sample.name, connector, sample.labels.task || ""].join("\u0000");
        current.set(key, sample.value);
        const sums = growth.get(connector);
        if (this.previous !== null && sums !== undefined) {
          sums[kind] += increase(this.previous.get(key), sample.value);
        }
      }
      const seconds = this.previousAt === null ? 0 : (now - this.previousAt) / 1000;
      this.previous = current;
      this.previousAt = now;
      if (seconds <= 0) return;
      for (const [connector, sums] of growth) {
        const points = this.points.get(connector) || [];
        points.push({ t: now, rate: sums.records / seconds, errors: sums.errors });
        this.points.set(connector, points.filter((p) => p.t > now - this.windowMs));
      }
    }

    of(connector) {
      return this.points.get(connector) || [];
    }

    /** Drops the points of connectors that are gone. */
    keepOnly(connectors) {
      const keep = new Set(connectors);
      for (const name of [...this.points.keys()]) {
        if (!keep.has(name)) this.points.delete(name);
      }
    }
  }

  /** SVG polyline coordinates of `points[field]`, right-aligned at `now`, scaled to the largest
   * value (a flat line at the bottom when all are zero). The time axis spans `windowMs`, or
   * less while the history is younger, so a new chart is drawn across its whole width. */
  function sparkline(points, field, now, width, height, windowMs = WINDOW_MS) {
    const pad = 2;
    const max = points.reduce((m, p) => Math.max(m, p[field]), 0);
    const age = points.length > 0 ? now - points[0].t : 0;
    const span = age > 0 ? Math.min(windowMs, age) : windowMs;
    const coords = points.map((p) => {
      const x = Math.max(0, width - ((now - p.t) / span) * width);
      const y = max > 0 ? pad + (height - 2 * pad) * (1 - p[field] / max) : height - pad;
      return `${round(x)},${round(y)}`;
    });
    return { points: coords.join(" "), max };
  }

  function round(value) {
    return Math.round(value * 10) / 10;
  }

  const api = {
    ERROR_COUNTERS,
    MIN_INTERVAL_MS,
    RECORD_COUNTERS,
    WINDOW_MS,
    History,
    increase,
    parsePrometheus,
    sparkline,
  };
  if (typeof module === "object" && module.exports) {
    module.exports = api;
  } else {
    globalThis.ConnectLiteMetrics = api;
  }
})();
