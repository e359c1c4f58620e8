// Pure helpers of the staff pages: flattening a metrics snapshot into chart series, keeping a
// bounded live history, and formatting. No DOM here, so vitest covers it without a browser.
import type { AlertNow as Alert, AlertsNow, KafkaHealth, OpsHistory } from "./contract/api";

export type Status = "OK" | "WARN" | "STALL" | "STOP" | "ERR";

export interface PartitionLag {
  topic: string;
  partition: number;
  committed: number;
  log_end: number;
  lag: number;
  lag_seconds: number;
  lag_seconds_source?: "caught_up" | "record" | "window";
  status: Status;
  reason: string;
}

export interface QueryRun {
  state: "running" | "restarting" | "stopped";
  restarts: number;
  failures: number;
  last_error: string | null;
  last_failure_ms: number | null;
  since_ms: number;
  next_start_ms: number | null;
}

export interface QueryLag {
  group: string;
  status: Status;
  worst: Status;
  lag: number;
  lag_seconds: number;
  input_rate: number;
  processed_rate: number;
  batch_ms: number;
  state_rows?: number;
  reported_ms: number | null;
  objective_s?: number | null;
  objective?: "met" | "breached" | null;
  seen_ms?: number | null;
  stale?: boolean;
  run?: QueryRun | null;
  partitions: PartitionLag[];
}

export interface Percentiles {
  n: number;
  p50: number;
  p90: number;
  p99: number;
}

export interface Snapshot {
  ts: number;
  queries: Record<string, QueryLag>;
  latency: Record<string, Percentiles>;
  websockets: Record<string, number>;
  dead_letters: Record<string, number>;
  late_records: Record<string, number>;
  redis_memory_bytes: number;
  celery_queue_depth: number;
  kafka?: KafkaHealth;
  latency_markets?: number[];
  alerts?: AlertsNow;
}

export type { AlertNow as Alert, AlertsNow, KafkaHealth } from "./contract/api";

/** The alerts of one reducer query (labelled with it), firing first. */
export function alertsOfQuery(alerts: AlertsNow | undefined, query: string): Alert[] {
  return (alerts?.alerts ?? [])
    .filter((a) => a.labels["query"] === query)
    .sort((a, b) => Number(b.state === "firing") - Number(a.state === "firing") || a.name.localeCompare(b.name));
}

/** Each alert once, named with its query and state, firing first: the same alert of several
 * targets once with a count ("TargetDown pending ×6"). */
export function alertNames(alerts: AlertsNow | undefined): string[] {
  const counts = new Map<string, number>();
  const ordered = [...(alerts?.alerts ?? [])].sort((a, b) => Number(b.state === "firing") - Number(a.state === "firing"));
  for (const a of ordered) {
    const name = `${a.name}${a.labels["query"] ? ` (${a.labels["query"]})` : ""} ${a.state}`;
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return [...counts].map(([name, n]) => (n > 1 ? `${name} ×${n}` : name));
}

/** The line above the queries: how many alerts fire and wait, or why none can be read. */
export function describeAlerts(alerts: AlertsNow | undefined): { level: "ok" | "warn" | "bad"; text: string } {
  if (!alerts || !alerts.available) return { level: "warn", text: `Alerts cannot be read${alerts?.error ? `: ${alerts.error}` : ""}.` };
  const firing = alerts.alerts.filter((a) => a.state === "firing").length;
  const pending = alerts.alerts.filter((a) => a.state === "pending").length;
  if (!firing && !pending) return { level: "ok", text: "No alert is firing or pending." };
  const parts = [];
  if (firing) parts.push(`${firing} firing`);
  if (pending) parts.push(`${pending} pending`);
  return { level: firing ? "bad" : "warn", text: `Alerts: ${parts.join(", ")}.` };
}

/** One line for the platform list: brokers, and the partitions that need an operator's eye. */
export function describeKafka(k: KafkaHealth): string {
  const parts = [`${k.brokers} broker${k.brokers === 1 ? "" : "s"}`, `${k.partitions} partitions`];
  parts.push(k.under_replicated ? `${k.under_replicated} under-replicated` : "all fully replicated");
  if (k.offline) parts.push(`${k.offline} offline`);
  return parts.join(" · ");
}

/** What the charts read of the history (GET /ops/api/history). */
export type History = Pick<OpsHistory, "ts" | "series">;

const SEVERITY: Record<Status, number> = { OK: 0, WARN: 1, STALL: 2, STOP: 3, ERR: 4 };

function sum(values: Record<string, number>): number {
  return Object.values(values).reduce((a, b) => a + b, 0);
}

/** The same names as the server's `snapshot_series`, so live points extend the sampled history. */
export function snapshotSeries(s: Snapshot): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, q] of Object.entries(s.queries)) {
    out[`lag.${name}`] = q.lag;
    out[`lag_s.${name}`] = q.lag_seconds;
    out[`rate_in.${name}`] = q.input_rate;
    out[`rate_out.${name}`] = q.processed_rate;
    out[`batch_ms.${name}`] = q.batch_ms;
    out[`state_rows.${name}`] = q.state_rows ?? 0;
    out[`status.${name}`] = SEVERITY[q.worst] ?? 0;
  }
  for (const [stage, p] of Object.entries(s.latency)) {
    out[`latency.${stage}.p50`] = p.p50;
    out[`latency.${stage}.p90`] = p.p90;
    out[`latency.${stage}.p99`] = p.p99;
  }
  out["websockets"] = sum(s.websockets);
  out["dead_letters"] = sum(s.dead_letters);
  out["late_records"] = sum(s.late_records);
  out["redis_memory_bytes"] = s.redis_memory_bytes;
  out["celery_queue_depth"] = s.celery_queue_depth;
  if (s.kafka !== undefined) {
    out["kafka.brokers"] = s.kafka.brokers;
    out["kafka.under_replicated"] = s.kafka.under_replicated;
    out["kafka.offline"] = s.kafka.offline;
  }
  return out;
}

/** Append one live point (epoch ms) to a history, dropping points older than `spanMs`. */
export function appendPoint(history: History, ts: number, values: Record<string, number>, spanMs: number): History {
  const keep = history.ts.findIndex((t) => t >= ts - spanMs);
  const start = keep < 0 ? history.ts.length : keep;
  const out: History = { ts: [...history.ts.slice(start), ts], series: {} };
  const names = new Set([...Object.keys(history.series), ...Object.keys(values)]);
  for (const name of names) {
    const old = history.series[name] ?? new Array<number | null>(history.ts.length).fill(null);
    out.series[name] = [...old.slice(start), values[name] ?? null];
  }
  return out;
}

export function column(history: History, name: string, scale = 1): (number | null)[] {
  const values = history.series[name] ?? new Array<number | null>(history.ts.length).fill(null);
  return values.map((v) => (v === null ? null : v * scale));
}

export function rangeMs(range: string): number {
  const match = /^(\d+)([mhd])$/.exec(range);
  if (!match) return 15 * 60_000;
  const unit = match[2] === "m" ? 60_000 : match[2] === "h" ? 3_600_000 : 86_400_000;
  return Number(match[1]) * unit;
}

export function formatCount(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e4) return `${(n / 1e3).toFixed(1)}k`;
  return String(Math.round(n));
}

export function formatBytes(n: number): string {
  return `${(n / 1_048_576).toFixed(1)} MB`;
}

export function formatAgo(ms: number, now: number): string {
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  return `${Math.floor(s / 3600)} h ago`;
}

/** Latency samples a browser can acknowledge from a market frame it received at `now`. */
export function frameLatency(frame: unknown, now: number): { e2e: number; ws: number } | null {
  if (typeof frame !== "object" || frame === null) return null;
  const ts = (frame as { ts?: Record<string, unknown> }).ts;
  if (!ts || typeof ts.event !== "number" || typeof ts.reducer !== "number") return null;
  const e2e = now - ts.event;
  const ws = now - ts.reducer;
  if (e2e < 0 || e2e > 600_000 || ws < 0 || ws > 600_000) return null;
  return { e2e, ws };
}

/** One line on a query's supervision: its state, its restarts and its last error. */
export function describeRun(run: QueryRun | null | undefined, now: number): string {
  if (!run) return "no supervision report";
  const restarts = run.restarts === 1 ? "1 restart" : `${run.restarts} restarts`;
  const parts = [run.state, restarts];
  if (run.state === "restarting" && run.next_start_ms) {
    parts.push(`next try in ${Math.max(0, Math.ceil((run.next_start_ms - now) / 1000))} s`);
  }
  if (run.last_error) parts.push(`last error: ${run.last_error}`);
  return parts.join(" · ");
}

export type Level = "ok" | "warn" | "bad";

/** A query's standing for someone on call: stale figures and a breached objective come before
 * the trend status, because "OK and shrinking" means little 10 s behind on a price stream. */
export interface Standing {
  level: Level;
  label: string;
  text: string;
}

export function formatSeconds(s: number): string {
  if (s < 10) return `${s.toFixed(1)} s`;
  if (s < 120) return `${Math.round(s)} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

export function standing(name: string, q: QueryLag, now: number): Standing {
  if (q.run && q.run.state !== "running") {
    return { level: "bad", label: q.run.state.toUpperCase(), text: `${name} is ${q.run.state}` };
  }
  if (q.stale) {
    const seen = q.seen_ms ? `last heard from ${formatAgo(q.seen_ms, now)}` : "never heard from";
    return { level: "bad", label: "STALE", text: `${name}: ${seen}; its figures are not current` };
  }
  const behind = formatSeconds(q.lag_seconds);
  if (q.objective === "breached" && q.objective_s != null) {
    return { level: "bad", label: "BREACHED", text: `${name} is ${behind} behind, objective ${formatSeconds(q.objective_s)}` };
  }
  if (q.worst === "STALL" || q.worst === "STOP" || q.worst === "ERR") {
    return { level: "bad", label: q.worst, text: `${name}: ${q.partitions.find((p) => p.status === q.worst)?.reason ?? q.worst}` };
  }
  if (q.worst === "WARN") return { level: "warn", label: "WARN", text: `${name}: lag growing, ${behind} behind` };
  const goal = q.objective_s != null ? ` (objective ${formatSeconds(q.objective_s)})` : "";
  return { level: "ok", label: "OK", text: `${name} is ${behind} behind${goal}` };
}

/** One sentence on the whole pipeline: every query within its objective, or what is not. */
export function verdict(s: Snapshot): { level: Level; text: string } {
  const standings = Object.entries(s.queries).map(([name, q]) => standing(name, q, s.ts));
  const bad = standings.filter((x) => x.level === "bad");
  const warn = standings.filter((x) => x.level === "warn");
  if (bad.length) return { level: "bad", text: bad.map((x) => x.text).join(" · ") };
  if (warn.length) return { level: "warn", text: warn.map((x) => x.text).join(" · ") };
  const n = standings.length;
  return { level: "ok", text: `All ${n} ${n === 1 ? "query" : "queries"} within their objectives` };
}
