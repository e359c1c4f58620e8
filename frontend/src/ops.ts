// Staff pages: live lag dashboard with charts, liability, subscriptions, settlement progress.
// One entry, dispatched on <body data-page>; every page polls the staff JSON API.
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import type { ChannelsOut, LiabilityOut, SettlementOut } from "./contract/api";
import { formatMoney } from "./decimal";
import {
  alertNames,
  alertsOfQuery,
  appendPoint,
  column,
  describeAlerts,
  describeKafka,
  describeRun,
  formatAgo,
  formatBytes,
  formatCount,
  formatSeconds,
  frameLatency,
  type History,
  type QueryLag,
  rangeMs,
  type Snapshot,
  snapshotSeries,
  standing,
  verdict,
} from "./opsmodel";

const POLL_MS = 2000;
const COLOURS = ["#2563eb", "#dc2626", "#16a34a", "#d97706", "#7c3aed", "#0891b2", "#db2777"];

function csrf(): string {
  return document.body.dataset.csrf ?? "";
}

async function getJson<T>(url: string): Promise<T> {
  const response = await fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return (await response.json()) as T;
}

async function postJson(url: string, body: unknown): Promise<Response> {
  return fetch(url, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRFToken": csrf() },
    body: JSON.stringify(body),
  });
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, text?: string) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

function every(ms: number, task: () => Promise<void>): void {
  const run = async () => {
    try {
      await task();
    } catch (error) {
      console.warn(error);
    } finally {
      window.setTimeout(run, ms);
    }
  };
  void run();
}

function stamp(): void {
  const updated = document.getElementById("updated");
  if (updated) updated.textContent = `updated ${new Date().toLocaleTimeString()}`;
}

// --- Lag dashboard ---------------------------------------------------------------------------

interface Chart {
  plot: uPlot;
  series: { name: string; label: string; scale?: number }[];
}

function chart(id: string, series: { name: string; label: string; scale?: number }[]): Chart | null {
  const host = document.getElementById(id);
  if (!host) return null;
  const options: uPlot.Options = {
    width: Math.max(240, host.clientWidth || 460),
    height: 180,
    series: [{}, ...series.map((s, i) => ({ label: s.label, stroke: COLOURS[i % COLOURS.length], width: 1.5 }))],
    axes: [{}, { size: 60 }],
    // With one sample (a dashboard just opened) uPlot spans the time axis over years; show the
    // ten minutes around it instead.
    scales: {
      x: {
        time: true,
        range: (u, min, max) => {
          const xs = u.data[0];
          return xs.length === 1 && xs[0] != null ? [xs[0] - 300, xs[0] + 300] : [min, max];
        },
      },
    },
    legend: { live: false },
  };
  const empty: uPlot.AlignedData = [[], ...series.map(() => [])];
  const plot = new uPlot(options, empty, host);
  // The chart follows its panel's width (a phone turned, a window resized).
  let width = options.width;
  new ResizeObserver(() => {
    const now = Math.max(240, host.clientWidth);
    if (now !== width) {
      width = now;
      plot.setSize({ width: now, height: options.height });
    }
  }).observe(host);
  return { plot, series };
}

function draw(c: Chart | null, history: History): void {
  if (!c) return;
  const data: uPlot.AlignedData = [history.ts.map((t) => t / 1000), ...c.series.map((s) => column(history, s.name, s.scale))];
  c.plot.setData(data);
}

function renderVerdict(host: HTMLElement, snapshot: Snapshot): void {
  const v = verdict(snapshot);
  host.dataset.level = v.level;
  host.textContent = v.text;
}

/** One tile per query: its standing first (stale, breached, trend), then seconds and records
 * behind and when it was last heard from. A tile links to the query's card below. */
function renderSummary(host: HTMLElement, snapshot: Snapshot): void {
  host.replaceChildren(
    ...Object.entries(snapshot.queries).map(([name, q]) => {
      const s = standing(name, q, snapshot.ts);
      const tile = el("a", { class: `tile level-${s.level}`, href: `#query-${name}`, "data-tile": name, "data-level": s.level });
      const head = el("span", { class: "tile-head" });
      head.append(el("span", { class: "tile-name" }, name), el("span", { class: `badge level-${s.level}`, "data-role": "standing" }, s.label));
      const alerts = alertsOfQuery(snapshot.alerts, name);
      const goal = q.objective_s != null ? ` / ${formatSeconds(q.objective_s)}` : "";
      tile.append(
        head,
        el("span", { class: "tile-figure", "data-role": "behind" }, `${formatSeconds(q.lag_seconds)}${goal}`),
        el("span", { class: "tile-note" }, `${formatCount(q.lag)} records · ${q.seen_ms ? formatAgo(q.seen_ms, snapshot.ts) : "never heard from"}`),
      );
      if (alerts.length) {
        const first = alerts[0] as (typeof alerts)[number];
        const more = alerts.length > 1 ? ` +${alerts.length - 1}` : "";
        tile.append(
          el("span", { class: `badge alert-${first.state}`, "data-role": "alert", title: alerts.map((a) => `${a.state}: ${a.name}`).join("\n") }, `${first.state}: ${first.name}${more}`),
        );
      }
      return tile;
    }),
  );
}

function partitionRow(p: QueryLag["partitions"][number]): HTMLTableRowElement {
  const row = el("tr", { "data-partition": String(p.partition), "data-status": p.status });
  const seconds = el("td", { class: "num", "data-role": "lag-seconds" }, formatSeconds(p.lag_seconds));
  if (p.lag_seconds_source === "window") seconds.title = "estimated from the lag window: the record could not be read";
  const status = el("td");
  status.append(el("span", { class: `badge lag-${p.status}` }, p.status));
  row.append(
    el("th", { scope: "row" }, String(p.partition)),
    el("td", { class: "num" }, String(p.committed)),
    el("td", { class: "num" }, String(p.log_end)),
    el("td", { class: "num", "data-role": "lag" }, String(p.lag)),
    seconds,
    status,
    el("td", { class: "why" }, p.reason),
  );
  return row;
}

function renderQueries(host: HTMLElement, snapshot: Snapshot): void {
  host.replaceChildren();
  for (const [name, q] of Object.entries(snapshot.queries)) {
    const s = standing(name, q, snapshot.ts);
    const card = el("article", { class: "panel query", id: `query-${name}`, "data-query": name, "data-status": q.worst, "data-level": s.level });
    const head = el("h3");
    head.append(
      el("span", {}, name),
      " ",
      el("span", { class: `badge level-${s.level}`, "data-role": "standing" }, s.label),
      " ",
      el("span", { class: "hint" }, "trend"),
      el("span", { class: `badge lag-${q.worst}`, "data-role": "status", title: "trend over the lag window (Burrow rules)" }, q.worst),
    );
    card.append(head);
    const alerts = alertsOfQuery(snapshot.alerts, name);
    if (alerts.length) {
      const list = el("ul", { class: "alerts", "data-role": "alerts", "aria-label": `${name} alerts` });
      for (const a of alerts) {
        const item = el("li", { "data-alert": a.name, "data-state": a.state, title: a.summary });
        item.append(el("span", { class: `badge alert-${a.state}` }, `${a.state}: ${a.name}`));
        list.append(item);
      }
      card.append(list);
    }
    card.append(el("p", { class: "standing" }, s.text));
    const topic = q.partitions[0]?.topic ?? "";
    const facts = el("dl", { class: "facts" });
    const fact = (term: string, value: string, role?: string) => {
      facts.append(el("dt", {}, term), el("dd", role ? { "data-role": role } : {}, value));
    };
    fact("Behind", `${formatSeconds(q.lag_seconds)} · ${formatCount(q.lag)} records`, "behind");
    fact("Objective", q.objective_s != null ? `${formatSeconds(q.objective_s)} (${q.objective})` : "none set");
    fact("Rate", `in ${q.input_rate.toFixed(1)}/s · processed ${q.processed_rate.toFixed(1)}/s`);
    fact("Last batch", `${Math.round(q.batch_ms)} ms · state ${formatCount(q.state_rows ?? 0)} rows`);
    fact("Heard from", q.seen_ms ? formatAgo(q.seen_ms, snapshot.ts) : "never", "seen");
    fact("Reads", `${topic} as ${q.group}`);
    card.append(facts);
    card.append(el("p", { class: `run run-${q.run?.state ?? "unknown"}`, "data-role": "run" }, describeRun(q.run, snapshot.ts)));
    const table = el("table", { class: "grid partitions" });
    table.append(el("caption", { class: "visually-hidden" }, `${name}: lag per partition of ${topic}`));
    const headRow = el("tr");
    for (const h of ["Partition", "Committed", "Log end", "Records behind", "Seconds behind", "Trend", "Why"]) headRow.append(el("th", { scope: "col" }, h));
    table.append(el("thead"), el("tbody"));
    table.tHead?.append(headRow);
    for (const p of q.partitions) table.tBodies[0]?.append(partitionRow(p));
    // A phone scrolls the partitions sideways; the region takes the focus so a keyboard can too.
    const scroller = el("div", { class: "table-scroll", tabindex: "0", role: "region", "aria-label": `${name} partitions` });
    scroller.append(table);
    card.append(scroller);
    host.append(card);
  }
}

/** The alerts line: how many fire and wait, each named (with its query), linking to the on-call page. */
function renderAlerts(host: HTMLElement, snapshot: Snapshot): void {
  const summary = describeAlerts(snapshot.alerts);
  host.dataset.level = summary.level;
  const line = el("span", { "data-role": "alerts-summary" }, summary.text);
  const names = alertNames(snapshot.alerts);
  const link = el("a", { href: host.dataset.oncallUrl ?? "/ops/oncall" }, "On-call page");
  host.replaceChildren(line, names.length ? ` ${names.join(" · ")} · ` : " ", link);
}

function renderPlatform(host: HTMLElement, s: Snapshot): void {
  host.replaceChildren();
  const add = (term: string, value: string, role: string) => {
    host.append(el("dt", {}, term), el("dd", { "data-role": role }, value));
  };
  const workers = Object.entries(s.websockets);
  add("Websockets", workers.length ? workers.map(([w, n]) => `${w}: ${n}`).join(", ") : "no worker reports", "websockets");
  const dl = Object.entries(s.dead_letters);
  add("Dead letters", dl.length ? dl.map(([r, n]) => `${r} ${n}`).join(", ") : "0", "dead-letters");
  const late = Object.entries(s.late_records);
  add("Late records", late.length ? late.map(([q, n]) => `${q} ${n}`).join(", ") : "0", "late-records");
  add("Redis memory", formatBytes(s.redis_memory_bytes), "redis-memory");
  add("Celery queue", String(s.celery_queue_depth), "celery-queue");
  if (s.kafka !== undefined) add("Kafka", describeKafka(s.kafka), "kafka");
  for (const [stage, p] of Object.entries(s.latency)) {
    add(`Latency ${stage}`, p.n ? `p50 ${p.p50} · p90 ${p.p90} · p99 ${p.p99} ms (n=${p.n})` : "no samples", `latency-${stage}`);
  }
}

/** Watch a few markets over the public websocket and acknowledge their latency to the server. */
function browserLatency(markets: number[], url: string): void {
  if (!markets.length) return;
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const socket = new WebSocket(`${scheme}://${location.host}/ws/odds/`);
  let pending: { e2e: number; ws: number }[] = [];
  socket.onopen = () => socket.send(JSON.stringify({ type: "watch", markets }));
  socket.onmessage = (event) => {
    const frame: unknown = JSON.parse(String(event.data));
    if ((frame as { type?: string }).type !== "market") return;
    const sample = frameLatency(frame, Date.now());
    if (sample) pending.push(sample);
  };
  window.setInterval(() => {
    if (!pending.length) return;
    const samples = pending.slice(0, 500);
    pending = [];
    void postJson(url, { samples });
  }, 5000);
}

function lagPage(): void {
  const host = document.getElementById("queries");
  const platform = document.getElementById("platform");
  const summary = document.getElementById("summary");
  const verdictLine = document.getElementById("verdict");
  const alertsLine = document.getElementById("alerts-now");
  const picker = document.getElementById("range") as HTMLSelectElement | null;
  if (!host || !platform || !summary || !verdictLine) return;
  const snapshotUrl = host.dataset.snapshotUrl ?? "";
  const historyUrl = host.dataset.historyUrl ?? "";
  let charts: Record<string, Chart | null> | null = null;
  const chartsFor = (queries: string[]) => ({
    lagS: chart("chart-lag-s", queries.map((q) => ({ name: `lag_s.${q}`, label: q }))),
    lag: chart("chart-lag", queries.map((q) => ({ name: `lag.${q}`, label: q }))),
    rates: chart("chart-rates", [
      { name: "rate_in.prices", label: "input" },
      { name: "rate_out.prices", label: "processed" },
    ]),
    batch: chart("chart-batch", queries.map((q) => ({ name: `batch_ms.${q}`, label: q }))),
    latency: chart("chart-latency", [
      { name: "latency.end_to_end.p50", label: "reducer p50" },
      { name: "latency.end_to_end.p99", label: "reducer p99" },
      { name: "latency.browser.p50", label: "browser p50" },
      { name: "latency.browser.p99", label: "browser p99" },
    ]),
    platform: chart("chart-platform", [
      { name: "websockets", label: "websockets" },
      { name: "celery_queue_depth", label: "celery queue" },
      { name: "redis_memory_bytes", label: "redis MB", scale: 1 / 1_048_576 },
      { name: "kafka.under_replicated", label: "kafka under-replicated" },
      { name: "kafka.offline", label: "kafka offline" },
    ]),
  });
  let history: History = { ts: [], series: {} };
  let span = rangeMs(picker?.value ?? "15m");
  const redraw = () => Object.values(charts ?? {}).forEach((c) => draw(c, history));
  const loadHistory = async () => {
    const range = picker?.value ?? "15m";
    span = rangeMs(range);
    history = await getJson<History>(`${historyUrl}?range=${encodeURIComponent(range)}`);
    redraw();
  };
  picker?.addEventListener("change", () => void loadHistory());
  let watching = false;
  let lastGood = 0;
  every(POLL_MS, async () => {
    let snapshot: Snapshot;
    try {
      snapshot = await getJson<Snapshot>(snapshotUrl);
    } catch (error) {
      // The dashboard itself cannot read the figures: say so instead of showing old ones as live.
      verdictLine.dataset.level = "bad";
      verdictLine.textContent = `The figures cannot be read (${String(error)})${lastGood ? `; these are from ${formatAgo(lastGood, Date.now())}` : ""}.`;
      document.body.dataset.stale = "true";
      throw error;
    }
    lastGood = Date.now();
    delete document.body.dataset.stale;
    if (!charts) {
      charts = chartsFor(Object.keys(snapshot.queries));
      void loadHistory();
    }
    renderVerdict(verdictLine, snapshot);
    if (alertsLine) renderAlerts(alertsLine, snapshot);
    renderSummary(summary, snapshot);
    renderQueries(host, snapshot);
    renderPlatform(platform, snapshot);
    history = appendPoint(history, snapshot.ts, snapshotSeries(snapshot), span);
    redraw();
    stamp();
    if (!watching && snapshot.latency_markets?.length) {
      watching = true;
      browserLatency(snapshot.latency_markets, host.dataset.latencyUrl ?? "");
    }
  });
}

// --- Trader pages ----------------------------------------------------------------------------

function liabilityPage(): void {
  const table = document.getElementById("liability") as HTMLTableElement | null;
  if (!table) return;
  every(POLL_MS, async () => {
    const { selections } = await getJson<LiabilityOut>(table.dataset.url ?? "");
    const top = Math.max(1, ...selections.map((s) => s.liability_pence));
    const body = table.tBodies[0];
    body?.replaceChildren(
      ...selections.map((s) => {
        const row = el("tr", { "data-selection": String(s.selection_id) });
        const bar = el("meter", {
          min: "0",
          max: String(top),
          value: String(s.liability_pence),
          "aria-label": `${s.selection}: share of the largest liability`,
        });
        row.append(
          el("td", {}, s.event),
          el("td", {}, s.market),
          el("td", {}, s.selection),
          el("td", { class: "num" }, s.price),
          el("td", { class: "num" }, String(s.bets)),
          el("td", { class: "num", "data-role": "liability" }, formatMoney(s.liability, s.currency)),
          el("td"),
        );
        row.lastElementChild?.append(bar);
        return row;
      }),
    );
    stamp();
  });
}

function subscriptionsPage(): void {
  const table = document.getElementById("channels") as HTMLTableElement | null;
  if (!table) return;
  const endUrl = table.dataset.endUrl ?? "";
  const refresh = async () => {
    const { channels } = await getJson<ChannelsOut>(table.dataset.url ?? "");
    const now = Date.now();
    table.tBodies[0]?.replaceChildren(
      ...channels.map((c) => {
        const row = el("tr", { "data-channel": c.channel });
        const what = c.query ? JSON.stringify(c.query) : c.markets.slice(0, 12).join(", ") + (c.markets.length > 12 ? " …" : "");
        const parts = Object.entries(c.partitions).map(([p, n]) => `p${p}×${n}`).join(" ");
        const end = el("button", { type: "button", "data-action": "end" }, "End");
        end.addEventListener("click", async () => {
          end.setAttribute("disabled", "");
          await postJson(endUrl.replace("CHANNEL", encodeURIComponent(c.channel)), {});
          await refresh();
        });
        row.append(
          el("td", { class: "mono" }, c.channel.slice(0, 10) + "…"),
          el("td", {}, c.user),
          el("td", {}, c.view),
          el("td", {}, what),
          el("td", {}, c.status),
          el("td", { class: "num" }, String(c.seq)),
          el("td", {}, c.created ? new Date(c.created).toLocaleTimeString() : ""),
          el("td", {}, formatAgo(c.seen, now)),
          el("td", {}, parts),
          el("td"),
        );
        row.lastElementChild?.append(end);
        return row;
      }),
    );
    stamp();
  };
  every(POLL_MS, refresh);
}

function settlementPage(): void {
  const host = document.getElementById("settlement");
  const bar = document.getElementById("settle-bar") as HTMLProgressElement | null;
  const count = document.getElementById("settle-count");
  const status = document.getElementById("settle-status");
  if (!host || !bar || !count || !status) return;
  const poll = async () => {
    const p = await getJson<SettlementOut>(host.dataset.url ?? "");
    bar.max = Math.max(1, p.total);
    bar.value = p.settled;
    count.textContent = `${p.settled} / ${p.total}`;
    count.dataset.settled = String(p.settled);
    count.dataset.total = String(p.total);
    status.textContent = p.market_status;
    host.dataset.done = String(p.done);
    if (!p.done) window.setTimeout(() => void poll(), 1000);
  };
  void poll();
}

const pages: Record<string, () => void> = {
  lag: lagPage,
  liability: liabilityPage,
  subscriptions: subscriptionsPage,
  markets: settlementPage,
};

document.addEventListener("DOMContentLoaded", () => pages[document.body.dataset.page ?? ""]?.());
