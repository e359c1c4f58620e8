// Websocket edge load: k6 virtual users, one websocket each, speaking the sportsbook protocol
// (docs/protocol.md): the page's Origin, a session cookie when given, a `watch` of the user's
// markets with batching on. Each market frame is timed from its own timestamp to its arrival.
//
// Run by bench/edge.py, which passes (environment):
//   URL            ws://host:port/ws/odds/
//   ORIGIN         the page origin the handshake checks
//   WATCH_FILE     JSON: one list of market ids per virtual user
//   COOKIES        optional: session cookies, "name=value" separated by spaces; user i takes i mod n
//   ARRIVAL_PER_S  optional: users connect this many a second, in order (0 or absent: all at once)
//
// A handshake refused or dropped before it opened (a storm of them: the server refuses one that
// waited too long for its turn) is tried again, as the browser's client does: back-off doubling
// from 500 ms to 5 s, half of each step plus a random share of the other half; until the source starts.
//   BATCH          "1": ask for one frame per tick
//   CONNECT_MS     the users connect in the CONNECT_MS after k6 has readied them all; then the
//                  source starts. setup() logs that moment ("start_at EPOCH_MS") for bench/edge.py,
//                  so however long k6 takes to ready its users, none of it is taken from the users'
//                  time to connect.
//   WARMUP_MS      frames in the first WARMUP_MS after the source starts are not counted
//   DURATION_MS    the measured window after the warm-up
//   TS_FIELD       the frame timestamp latency is measured from ("reducer" or "event")
//   SUMMARY        path the summary JSON is written to
import { SharedArray } from "k6/data";
import exec from "k6/execution";
import { Counter, Trend } from "k6/metrics";
import { setTimeout } from "k6/timers";
import { WebSocket } from "k6/websockets";

const watchLists = new SharedArray("watch", () => JSON.parse(open(__ENV.WATCH_FILE)));
const cookies = (__ENV.COOKIES || "").split(" ").filter((c) => c.length > 0);
const connectMs = Number(__ENV.CONNECT_MS);
const warmupMs = Number(__ENV.WARMUP_MS);
const durationMs = Number(__ENV.DURATION_MS);
// Set by each user from setup()'s start: epoch ms the source starts, the window opens and ends.
let startAt = 0;
let measureFrom = 0;
let stopAt = 0;
const tsField = __ENV.TS_FIELD || "reducer";
const batch = __ENV.BATCH === "1";
const arrivalPerS = Number(__ENV.ARRIVAL_PER_S || "0");

const deliveries = new Counter("edge_deliveries");
const conflated = new Counter("edge_conflated");
const lateOpens = new Counter("edge_late_opens");
const retries = new Counter("edge_retries");
const socketErrors = new Counter("edge_socket_errors");
const loggedIn = new Counter("edge_logged_in");
const latency = new Trend("edge_latency_ms", true);
// When each socket opened (the server accepted it, the session's punter read), in ms from the
// scenario's start: when all users start at once, the last open says how fast a burst is accepted.
const opened = new Trend("edge_open_ms", true);

export const options = {
  scenarios: {
    edge: {
      executor: "per-vu-iterations",
      vus: watchLists.length,
      iterations: 1,
      maxDuration: `${Math.ceil((connectMs + warmupMs + durationMs) / 1000) + 120}s`,
    },
  },
  summaryTrendStats: ["p(50)", "p(99)", "max", "count"],
  // The generator's own figures only: no HTTP, no thresholds, no per-request tags.
  systemTags: [],
  discardResponseBodies: true,
};

// The frame's timestamp field, read without parsing the frame: the `ts` object is the only
// place its name occurs (docs/protocol.md).
const tsKey = `"${tsField}":`;

function stamp(raw, from) {
  const at = raw.indexOf(tsKey, from);
  if (at < 0) return [-1, 0];
  const start = at + tsKey.length;
  let end = start;
  while (end < raw.length && raw.charCodeAt(end) >= 48 && raw.charCodeAt(end) <= 57) end++;
  return [end, Number(raw.slice(start, end))];
}

// Runs once, after k6 has readied every user and before the first connects.
export function setup() {
  const at = Date.now() + connectMs;
  console.log(`start_at ${at}`);
  return { startAt: at };
}

export default function (data) {
  startAt = data.startAt;
  measureFrom = startAt + warmupMs;
  stopAt = measureFrom + durationMs;
  const index = exec.vu.idInTest - 1;
  if (arrivalPerS > 0) {
    setTimeout(() => connect(index), (index * 1000) / arrivalPerS);
  } else {
    connect(index);
  }
}

function connect(index, attempt = 0) {
  const headers = { Origin: __ENV.ORIGIN };
  if (cookies.length > 0) headers.Cookie = cookies[index % cookies.length];
  // Counted here and handed to k6's metrics after the window, so the metrics pipeline does not
  // compete with the sockets while they are measured.
  let delivered = 0;
  let merged = 0;
  const latencies = [];
  const ws = new WebSocket(__ENV.URL, null, { headers });
  let isOpen = false;
  let retried = false;
  const retry = () => {
    if (isOpen || retried || Date.now() >= startAt) return false;
    retried = true;
    retries.add(1);
    const step = Math.min(5000, 250 * 2 ** Math.min(attempt + 1, 5));
    setTimeout(() => connect(index, attempt + 1), step / 2 + Math.random() * (step / 2));
    return true;
  };
  ws.onclose = () => {
    retry();
  };
  ws.onopen = () => {
    isOpen = true;
    opened.add(Date.now() - exec.scenario.startTime);
    if (Date.now() > startAt) lateOpens.add(1);
    ws.send(JSON.stringify({ type: "watch", markets: watchLists[index], batch }));
    setTimeout(
      () => {
        ws.close();
        deliveries.add(delivered);
        conflated.add(merged);
        for (const ms of latencies) latency.add(ms);
      },
      Math.max(0, stopAt - Date.now()),
    );
  };
  ws.onerror = (e) => {
    if (retry()) return;
    // Closing at the end of the window may report writes after the close: not the server's.
    if (Date.now() >= stopAt) return;
    socketErrors.add(1);
    console.error(`websocket error: ${e.error}`);
  };
  ws.onmessage = (event) => {
    const now = Date.now();
    const raw = event.data;
    // The server names the punter a session cookie logged in (docs/protocol.md, `hello`).
    if (raw.startsWith('{"type":"hello"')) {
      if (!raw.includes('"user":null')) loggedIn.add(1);
      return;
    }
    if (now < measureFrom || now > stopAt) return;
    if (raw.startsWith('{"type":"market')) {
      // One market frame, or a batch of them: each item has its own stamp; the frame's
      // latency is its first item's.
      let [at, ts] = stamp(raw, 0);
      if (at < 0) return;
      latencies.push(now - ts);
      delivered++;
      while ((at = stamp(raw, at)[0]) >= 0) delivered++;
    } else if (raw.startsWith('{"type":"conflated"')) {
      merged += JSON.parse(raw).merged;
    }
  };
}

function value(data, metric, stat) {
  const m = data.metrics[metric];
  return m && m.values[stat] !== undefined ? m.values[stat] : 0;
}

export function handleSummary(data) {
  const summary = {
    deliveries: value(data, "edge_deliveries", "count"),
    conflated: value(data, "edge_conflated", "count"),
    late_opens: value(data, "edge_late_opens", "count"),
    socket_errors: value(data, "edge_socket_errors", "count"),
    retries: value(data, "edge_retries", "count"),
    logged_in: value(data, "edge_logged_in", "count"),
    latency_samples: value(data, "edge_latency_ms", "count"),
    p50_ms: value(data, "edge_latency_ms", "p(50)"),
    p99_ms: value(data, "edge_latency_ms", "p(99)"),
    max_ms: value(data, "edge_latency_ms", "max"),
    sessions: value(data, "ws_sessions", "count"),
    opens: value(data, "edge_open_ms", "count"),
    open_p50_ms: value(data, "edge_open_ms", "p(50)"),
    open_max_ms: value(data, "edge_open_ms", "max"),
  };
  return { [__ENV.SUMMARY]: JSON.stringify(summary) };
}
