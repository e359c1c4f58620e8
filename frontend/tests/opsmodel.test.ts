import { describe, expect, it } from "vitest";
import {
  type Alert, type AlertsNow, alertNames, alertsOfQuery, appendPoint, column, describeAlerts, describeKafka, describeRun, formatAgo, formatCount, formatSeconds,
  frameLatency, type History, type QueryLag, rangeMs,
  type Snapshot, snapshotSeries, standing, verdict,
} from "../src/opsmodel";

const snapshot: Snapshot = {
  ts: 1000,
  queries: {
    prices: {
      group: "sb.reducer.prices", status: "WARN", worst: "WARN", lag: 7, lag_seconds: 1.5, input_rate: 10,
      processed_rate: 9, batch_ms: 200, reported_ms: 900, partitions: [],
    },
  },
  latency: { end_to_end: { n: 3, p50: 12, p90: 30, p99: 31 } },
  websockets: { a: 4, b: 3 },
  dead_letters: { bad_json: 2 },
  late_records: {},
  redis_memory_bytes: 1024,
  celery_queue_depth: 3,
  kafka: { brokers: 2, replication_factor: 3, partitions: 12, under_replicated: 4, offline: 0, leaders: { "1": 6, "2": 6 } },
};

describe("snapshotSeries", () => {
  it("uses the server's series names", () => {
    const s = snapshotSeries(snapshot);
    expect(s["lag.prices"]).toBe(7);
    expect(s["status.prices"]).toBe(1);
    expect(s["websockets"]).toBe(7);
    expect(s["latency.end_to_end.p99"]).toBe(31);
    expect(s["late_records"]).toBe(0);
    expect(s["kafka.under_replicated"]).toBe(4);
    expect(s["kafka.brokers"]).toBe(2);
  });
});

describe("describeKafka", () => {
  it("names the brokers and the partitions that need attention", () => {
    expect(describeKafka(snapshot.kafka!)).toBe("2 brokers · 12 partitions · 4 under-replicated");
    expect(describeKafka({ ...snapshot.kafka!, brokers: 3, under_replicated: 0, offline: 1 })).toBe(
      "3 brokers · 12 partitions · all fully replicated · 1 offline",
    );
  });
});

describe("appendPoint", () => {
  it("adds a point and drops points older than the span", () => {
    let h: History = { ts: [0, 1000], series: { a: [1, 2] } };
    h = appendPoint(h, 2000, { a: 3, b: 9 }, 1500);
    expect(h.ts).toEqual([1000, 2000]);
    expect(h.series["a"]).toEqual([2, 3]);
    expect(h.series["b"]).toEqual([null, 9]);
  });
  it("keeps columns aligned when a series is missing from the point", () => {
    const h = appendPoint({ ts: [0], series: { a: [1] } }, 10, {}, 100);
    expect(column(h, "a")).toEqual([1, null]);
    expect(column(h, "missing")).toEqual([null, null]);
  });
});

describe("formatting", () => {
  it("formats ranges, counts and ages", () => {
    expect(rangeMs("15m")).toBe(900_000);
    expect(rangeMs("7d")).toBe(604_800_000);
    expect(formatCount(12_345)).toBe("12.3k");
    expect(formatAgo(0, 90_000)).toBe("1 min ago");
  });
});

describe("frameLatency", () => {
  it("measures receipt against the event and reducer times", () => {
    expect(frameLatency({ ts: { event: 100, reducer: 150 } }, 200)).toEqual({ e2e: 100, ws: 50 });
  });
  it("ignores frames without times or with impossible ones", () => {
    expect(frameLatency({ type: "market" }, 200)).toBeNull();
    expect(frameLatency({ ts: { event: 300, reducer: 150 } }, 200)).toBeNull();
  });
});

describe("describeRun", () => {
  const base = { restarts: 0, failures: 0, last_error: null, last_failure_ms: null, since_ms: 0, next_start_ms: null };

  it("says when a query has no supervision report", () => {
    expect(describeRun(undefined, 0)).toBe("no supervision report");
  });

  it("shows a restarting query's countdown and its last error", () => {
    const run = { ...base, state: "restarting" as const, restarts: 2, failures: 3, last_error: "boom", next_start_ms: 4_500 };
    expect(describeRun(run, 1_000)).toBe("restarting · 2 restarts · next try in 4 s · last error: boom");
  });

  it("keeps the last error of a query running again", () => {
    const run = { ...base, state: "running" as const, restarts: 1, last_error: "Redis down" };
    expect(describeRun(run, 0)).toBe("running · 1 restart · last error: Redis down");
  });
});

describe("standing and verdict", () => {
  const base: QueryLag = {
    group: "g", status: "OK", worst: "OK", lag: 3, lag_seconds: 0.4, input_rate: 1, processed_rate: 1, batch_ms: 10,
    reported_ms: 9000, objective_s: 2, objective: "met", seen_ms: 9500, stale: false, partitions: [],
    run: { state: "running", restarts: 0, failures: 0, last_error: null, last_failure_ms: null, since_ms: 0, next_start_ms: null },
  };
  const at = (queries: Record<string, QueryLag>): Snapshot => ({ ...snapshot, ts: 10_000, queries });

  it("is OK within the objective and says how far behind", () => {
    expect(standing("prices", base, 10_000)).toEqual({ level: "ok", label: "OK", text: "prices is 0.4 s behind (objective 2.0 s)" });
    expect(verdict(at({ prices: base, commands: base }))).toEqual({ level: "ok", text: "All 2 queries within their objectives" });
  });
  it("is BREACHED past the objective even when the trend is OK", () => {
    const late = { ...base, lag_seconds: 12.3, objective: "breached" as const };
    expect(standing("prices", late, 10_000)).toMatchObject({ level: "bad", label: "BREACHED", text: "prices is 12 s behind, objective 2.0 s" });
    expect(verdict(at({ prices: late, commands: base })).level).toBe("bad");
  });
  it("is STALE when the query has not been heard from, whatever its last figures", () => {
    const silent = { ...base, stale: true, seen_ms: 10_000 - 125_000 };
    expect(standing("movers", silent, 10_000)).toMatchObject({ level: "bad", label: "STALE", text: "movers: last heard from 2 min ago; its figures are not current" });
    expect(standing("movers", { ...silent, seen_ms: null }, 10_000).text).toContain("never heard from");
  });
  it("puts a query waiting to restart first, and a growing lag as a warning", () => {
    const down = { ...base, run: { ...base.run!, state: "restarting" as const } };
    expect(standing("prices", { ...down, stale: true }, 10_000).label).toBe("RESTARTING");
    const growing = { ...base, worst: "WARN" as const };
    expect(verdict(at({ prices: growing }))).toEqual({ level: "warn", text: "prices: lag growing, 0.4 s behind" });
  });
  it("formats seconds for a glance", () => {
    expect([formatSeconds(0.42), formatSeconds(12.3), formatSeconds(600), formatSeconds(9000)]).toEqual(["0.4 s", "12 s", "10 min", "2.5 h"]);
  });
});

describe("alerts beside the queries", () => {
  const now = (alerts: Alert[]): AlertsNow => ({ available: true, error: null, alerts });
  const alert = (name: string, state: string, query?: string): Alert => ({
    name,
    state,
    severity: "page",
    summary: "",
    labels: query ? { alertname: name, query } : { alertname: name },
    active_at: null,
  });

  it("gives each query its own alerts, firing before pending", () => {
    const found = now([
      alert("ReducerQueryStalled", "pending", "prices"),
      alert("ReducerLagOverObjective", "firing", "prices"),
      alert("ReducerLagOverObjective", "firing", "commands"),
      alert("RedisMemoryNearLimit", "firing"),
    ]);
    expect(alertsOfQuery(found, "prices").map((a) => `${a.state} ${a.name}`)).toEqual([
      "firing ReducerLagOverObjective",
      "pending ReducerQueryStalled",
    ]);
    expect(alertsOfQuery(found, "movers")).toEqual([]);
  });

  it("says how many fire and wait, and when the alerts cannot be read", () => {
    expect(describeAlerts(now([]))).toEqual({ level: "ok", text: "No alert is firing or pending." });
    expect(describeAlerts(now([alert("A", "pending")]))).toEqual({ level: "warn", text: "Alerts: 1 pending." });
    expect(describeAlerts(now([alert("A", "firing"), alert("B", "pending")])).text).toBe("Alerts: 1 firing, 1 pending.");
    expect(describeAlerts({ available: false, error: "no answer", alerts: [] })).toEqual({
      level: "warn",
      text: "Alerts cannot be read: no answer.",
    });
    expect(describeAlerts(undefined).level).toBe("warn");
  });
});

describe("the alerts line", () => {
  const alert = (name: string, state: string, query?: string): Alert => ({
    name, state, severity: "page", summary: "", labels: query ? { alertname: name, query } : { alertname: name }, active_at: null,
  });

  it("names each alert once, firing first, the same alert of several targets with a count", () => {
    const alerts: AlertsNow = {
      available: true,
      error: null,
      alerts: [alert("TargetDown", "pending"), alert("TargetDown", "pending"), alert("ReducerLagOverObjective", "firing", "commands")],
    };
    expect(alertNames(alerts)).toEqual(["ReducerLagOverObjective (commands) firing", "TargetDown pending ×2"]);
    expect(alertNames(undefined)).toEqual([]);
  });
});
