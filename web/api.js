// The REST client and the formatting every page shares. The pages read only the REST
// API (docs/rest-api.md): Flink's paths, plus clink's POST /api/v1/jobs/sql and
// GET /jobs/:id/sql.
'use strict';

const UI = (window.UI = {});
UI.pages = {};  // route name -> {mount(root, params), refresh()} (pages.js, job.js)

// An answer other than 2xx: its status and Flink's {"errors": [...]} joined.
UI.HttpError = class extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
};

UI.request = async function (method, path, body) {
  const init = { method, cache: 'no-store', headers: {} };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (e) {
    throw new UI.HttpError(0, `${method} ${path}: the server does not answer (${e.message})`);
  }
  const text = await response.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : {};
  } catch (e) {
    json = null;
  }
  if (!response.ok) {
    const errors = json && Array.isArray(json.errors) ? json.errors.join('\n') : text;
    throw new UI.HttpError(response.status, errors || `${method} ${path}: HTTP ${response.status}`);
  }
  return json;
};
UI.get = (path) => UI.request('GET', path);
UI.post = (path, body) => UI.request('POST', path, body === undefined ? {} : body);
UI.patch = (path) => UI.request('PATCH', path, {});  // a body, as Flink's client sends one

// Flink's backpressure levels: up to 10% ok, up to 50% low, above high.
UI.backpressureLevel = (ratio) => (ratio <= 0.1 ? 'ok' : ratio <= 0.5 ? 'low' : 'high');

// Text into HTML.
UI.esc = function (value) {
  return String(value === undefined || value === null ? '' : value).replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]
  );
};

UI.fmtCount = (n) => (typeof n === 'number' ? Math.round(n).toLocaleString('en-US') : '–');

UI.fmtBytes = function (n) {
  if (typeof n !== 'number' || n < 0) return '–';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return (i === 0 ? n : n.toFixed(n < 10 ? 2 : 1)) + ' ' + units[i];
};

UI.fmtDuration = function (ms) {
  if (typeof ms !== 'number' || ms < 0) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  let s = Math.floor(ms / 1000);
  const d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60);
  s %= 60;
  if (d > 0) return `${d}d ${h}h ${m}m`;
  if (h > 0) return `${h}h ${m}m ${s}s`;
  if (m > 0) return `${m}m ${s}s`;
  return `${(ms / 1000).toFixed(ms < 10000 ? 1 : 0)} s`;
};

const pad = (n, w = 2) => String(n).padStart(w, '0');

// Local time, as a person reads a clock: 2026-12-02 03:04:05.
UI.fmtTime = function (ms, withMillis) {
  if (typeof ms !== 'number' || ms <= 0) return '–';
  const t = new Date(ms);
  const text = `${t.getFullYear()}-${pad(t.getMonth() + 1)}-${pad(t.getDate())} ` +
    `${pad(t.getHours())}:${pad(t.getMinutes())}:${pad(t.getSeconds())}`;
  return withMillis ? `${text}.${pad(t.getMilliseconds(), 3)}` : text;
};

// Flink reports "no watermark yet" as Long.MIN_VALUE; event times as epoch millis.
UI.LONG_MIN = -9223372036854775808;
UI.fmtWatermark = function (value) {
  const n = Number(value);
  if (value === undefined || value === null || !isFinite(n) || n <= -9.2e18) return 'none';
  if (n >= 9.2e18) return 'end of input';
  if (n > 946684800000) return UI.fmtTime(n, true);  // after 2000-01-01: a timestamp
  return UI.fmtCount(n);
};

UI.fmtPercent = (ratio) => (typeof ratio === 'number' && isFinite(ratio) ? `${Math.round(ratio * 100)}%` : '–');

// A job's or task's state as a coloured label.
UI.stateBadge = (state) => `<span class="state state-${UI.esc(state)}">${UI.esc(state)}</span>`;

UI.TERMINAL_STATES = ['FINISHED', 'CANCELED', 'FAILED'];

// A message box in `element` (kind: "error" | "info" | "ok").
UI.showMessage = function (element, kind, text) {
  element.innerHTML = text ? `<div class="message message-${kind}">${UI.esc(text)}</div>` : '';
};
