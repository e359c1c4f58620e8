// Subscriber channels under load: k6 virtual users speaking the sportsbook protocol
// (docs/protocol.md, "Subscriber channels" and "Shared query channels") as a browser does.
//
// Each user has a role in the plan:
//   holder    a logged-in punter: creates its channels (POST /api/streams, one per spec), opens a
//             websocket, attaches each, then begins each (POST /api/streams/<id>/begin); every
//             channel frame's sequence is checked (a gap is counted) and every market of a
//             `view.delta` is timed from its source event (`ts.event`) to its arrival
//   follower  a visitor following one shared query (`{"type": "query", …}`); its frames'
//             sequences are checked and counted
//   watcher   a logged-in punter watching markets, as the browser watches them (unbatched
//             unless BATCH=1): every market frame timed the same way, the stage's baseline
//
// Run by bench/channels.py, which passes (environment):
//   BASE           http://host:port of the site
//   URL            ws://host:port/ws/odds/
//   ORIGIN         the page origin the handshake and the CSRF check compare
//   PLAN_FILE      JSON: one entry per virtual user ({role, specs | query | markets, session, csrf})
//   SESSION_COOKIE, CSRF_COOKIE, CSRF_HEADER   the site's cookie and header names
//   RAMP_MS        users start their setup spread over this many ms
//   SIGNAL         http://host:port of the driver: from its socket's opening, a user asks
//                  `/window` about every POLL_MS until it answers 200 with the epoch ms the window
//                  starts at (the driver answers once every channel streams)
//   WARMUP_MS      frames in the first WARMUP_MS after the window's start are not counted
//   DURATION_MS    the measured window after the warm-up
//   MAX_S          how long the run may last in all
//   BATCH          "1": watchers ask for one frame per tick
//   OPEN_ATTEMPTS  handshakes a user tries before its socket counts as an error (default 5)
//   SUMMARY        path the summary JSON is written to
import http from "k6/http";
import { SharedArray } from "k6/data";
import exec from "k6/execution";
import { Counter, Trend } from "k6/metrics";
import { setTimeout } from "k6/timers";
import { WebSocket } from "k6/websockets";

const plan = new SharedArray("plan", () => JSON.parse(open(__ENV.PLAN_FILE)));
const base = __ENV.BASE;
const origin = __ENV.ORIGIN;
const rampMs = Number(__ENV.RAMP_MS || "0");
const warmupMs = Number(__ENV.WARMUP_MS);
const durationMs = Number(__ENV.DURATION_MS);
const pollMs = Number(__ENV.POLL_MS || "2000");
const openAttempts = Number(__ENV.OPEN_ATTEMPTS || "5");
// The window, once the driver has named it (until then nothing is counted and nothing stops).
let measureFrom = Infinity;
let stopAt = Infinity;
const batch = __ENV.BATCH === "1";

const channelFrames = new Counter("channel_frames");
const channelMarkets = new Counter("channel_markets");
const channelGaps = new Counter("channel_gaps");
const channelImages = new Counter("channel_images");
const channelLatency = new Trend("channel_latency_ms", true);
const watchMarkets = new Counter("watch_markets");
const watchLatency = new Trend("watch_latency_ms", true);
const conflated = new Counter("watch_conflated");
const queryFrames = new Counter("query_frames");
const queryGaps = new Counter("query_gaps");
const stale = new Counter("stale_frames");
const created = new Counter("channels_created");
const createFailures = new Counter("create_failures");
const attached = new Counter("channels_attached");
const begun = new Counter("channels_begun");
const beginFailures = new Counter("begin_failures");
const followed = new Counter("queries_followed");
const ready = new Counter("users_ready");
const lateSetups = new Counter("late_setups");
const setupMs = new Trend("setup_ms", true);
const serverErrors = new Counter("server_errors");
const openRetries = new Counter("open_retries");
const socketErrors = new Counter("socket_errors");
const loggedIn = new Counter("logged_in");

export const options = {
  scenarios: {
    channels: {
      executor: "per-vu-iterations",
      vus: plan.length,
      iterations: 1,
      maxDuration: `${__ENV.MAX_S}s`,
    },
  },
  summaryTrendStats: ["p(50)", "p(99)", "max", "count"],
  systemTags: [],
  discardResponseBodies: true,
};

// A frame's source event times, read without parsing it: every market frame in it carries one
// `ts` object, the only place the name occurs (docs/protocol.md).
const eventKey = '"event":';

function stamp(raw, from) {
  const at = raw.indexOf(eventKey, from);
  if (at < 0) return [-1, 0];
  const start = at + eventKey.length;
  let end = start;
  while (end < raw.length && raw.charCodeAt(end) >= 48 && raw.charCodeAt(end) <= 57) end++;
  return [end, Number(raw.slice(start, end))];
}

// A channel frame starts `{"seq":12,"type":"view.delta","v":1,"channel":"<id>"` (the reducers'
// publishing script puts the sequence first).
function frameHead(raw) {
  const comma = raw.indexOf(",", 7);
  const seq = Number(raw.slice(7, comma));
  const typeAt = comma + 9;
  const type = raw.slice(typeAt, raw.indexOf('"', typeAt));
  const channelAt = raw.indexOf('"channel":"', typeAt) + 11;
  return { seq, type, channel: raw.slice(channelAt, raw.indexOf('"', channelAt)), end: channelAt };
}

// Sequences per channel: an image (re)starts a channel's count; any other frame must be the
// next one. A frame above it is a gap; one at or below the last is a frame already held (a
// shared channel's image is read at the channel's sequence, so a frame queued meanwhile may
// follow it), which a client drops.
function sequenced(seqs, head, gaps) {
  const last = seqs[head.channel];
  if (last !== undefined && head.seq > last + 1) gaps.add(1);
  else if (last !== undefined && head.seq <= last) stale.add(1);
  if (last === undefined || head.seq > last) seqs[head.channel] = head.seq;
}

// Ask the driver for the window until it names one; then close the socket at its end.
function awaitWindow(ws, done) {
  http.asyncRequest("GET", `${__ENV.SIGNAL}/window`, null, { responseType: "text" }).then(
    (res) => {
      if (res.status === 200) {
        measureFrom = Number(res.body) + warmupMs;
        stopAt = measureFrom + durationMs;
        setTimeout(
          () => {
            ws.close();
            done();
          },
          Math.max(0, stopAt - Date.now()),
        );
      } else {
        setTimeout(() => awaitWindow(ws, done), pollMs * (0.5 + Math.random()));
      }
    },
    () => setTimeout(() => awaitWindow(ws, done), pollMs),
  );
}

function onError(e) {
  // Closing at the end of the window may report writes after the close: not the server's.
  if (Date.now() >= stopAt) return;
  socketErrors.add(1);
  console.error(`websocket error: ${e.error}`);
}

// A websocket as the browser's client opens one: a handshake that fails is tried again after
// 1, 2, 4 … s, OPEN_ATTEMPTS in all (each retry counted); a socket that fails once open is a drop.
function socket(headers, onOpen, onMessage, attempt = 1) {
  const ws = new WebSocket(__ENV.URL, null, { headers });
  let opened = false;
  ws.onopen = () => {
    opened = true;
    onOpen(ws);
  };
  ws.onmessage = onMessage;
  ws.onerror = (e) => {
    if (!opened && attempt < openAttempts) {
      openRetries.add(1);
      setTimeout(() => socket(headers, onOpen, onMessage, attempt + 1), 1000 * 2 ** (attempt - 1));
      return;
    }
    onError(e);
  };
}

// A user is set up (its images are in): counted, late when the window had started.
function settled(startedAt) {
  const now = Date.now();
  setupMs.add(now - startedAt);
  ready.add(1);
  if (now > measureFrom - warmupMs) lateSetups.add(1);
}

function common(raw) {
  if (raw.startsWith('{"type":"hello"')) {
    if (!raw.includes('"user":null')) loggedIn.add(1);
    return true;
  }
  if (raw.startsWith('{"type":"error"') || raw.startsWith('{"type":"ended"')) {
    serverErrors.add(1);
    console.error(`server: ${raw.slice(0, 200)}`);
    return true;
  }
  return false;
}

function holder(user, startedAt) {
  const cookie = `${__ENV.SESSION_COOKIE}=${user.session}; ${__ENV.CSRF_COOKIE}=${user.csrf}`;
  const headers = { "Content-Type": "application/json", Cookie: cookie, Origin: origin };
  headers[__ENV.CSRF_HEADER] = user.csrf;
  const ids = [];
  for (const spec of user.specs) {
    const res = http.post(`${base}/api/streams`, JSON.stringify(spec), { headers, responseType: "text" });
    if (res.status === 201) {
      ids.push(JSON.parse(res.body).channel);
      created.add(1);
    } else {
      createFailures.add(1);
      console.error(`create: ${res.status} ${String(res.body).slice(0, 200)}`);
    }
  }
  const seqs = {};
  const latencies = [];
  let frames = 0;
  let markets = 0;
  let attachedCount = 0;
  let images = 0;
  let isReady = false;
  const beginAll = () => {
    for (const id of ids) {
      http.asyncRequest("POST", `${base}/api/streams/${id}/begin`, "{}", { headers }).then((res) => {
        if (res.status === 202) begun.add(1);
        else {
          beginFailures.add(1);
          console.error(`begin: ${res.status}`);
        }
      });
    }
  };
  const done = () => {
    channelFrames.add(frames);
    channelMarkets.add(markets);
    channelImages.add(images);
    for (const ms of latencies) channelLatency.add(ms);
  };
  const opened = (ws) => {
    for (const id of ids) ws.send(JSON.stringify({ type: "attach", channel: id }));
    awaitWindow(ws, done);
  };
  const received = (event) => {
    const now = Date.now();
    const raw = event.data;
    if (raw.startsWith('{"seq":')) {
      const head = frameHead(raw);
      sequenced(seqs, head, channelGaps);
      if (head.type === "view.image") {
        images++;
        if (!isReady && images >= ids.length) {
          isReady = true;
          settled(startedAt);
        }
        return;
      }
      if (head.type !== "view.delta" || now < measureFrom || now > stopAt) return;
      frames++;
      let at = head.end;
      for (;;) {
        const [end, ts] = stamp(raw, at);
        if (end < 0) break;
        latencies.push(now - ts);
        markets++;
        at = end;
      }
    } else if (raw.startsWith('{"type":"attached"')) {
      attached.add(1);
      attachedCount++;
      if (attachedCount === ids.length) beginAll();
    } else {
      common(raw);
    }
  };
  socket({ Origin: origin, Cookie: cookie }, opened, received);
}

function follower(user, startedAt) {
  const seqs = {};
  let frames = 0;
  let isReady = false;
  const opened = (ws) => {
    ws.send(JSON.stringify({ type: "query", query: user.query }));
    awaitWindow(ws, () => queryFrames.add(frames));
  };
  const received = (event) => {
    const now = Date.now();
    const raw = event.data;
    if (raw.startsWith('{"seq":')) {
      const head = frameHead(raw);
      const image = raw.includes('"image":true');
      if (image) {
        // An image (re)starts the count, at the channel's sequence when it was read.
        seqs[head.channel] = Math.max(seqs[head.channel] || 0, head.seq);
        if (!isReady) {
          isReady = true;
          settled(startedAt);
        }
        return;
      }
      sequenced(seqs, head, queryGaps);
      if (now >= measureFrom && now <= stopAt) frames++;
    } else if (raw.startsWith('{"type":"attached"')) {
      followed.add(1);
    } else {
      common(raw);
    }
  };
  socket({ Origin: origin }, opened, received);
}

function watcher(user, startedAt) {
  const cookie = `${__ENV.SESSION_COOKIE}=${user.session}; ${__ENV.CSRF_COOKIE}=${user.csrf}`;
  const latencies = [];
  let delivered = 0;
  let merged = 0;
  let isReady = false;
  const done = () => {
    watchMarkets.add(delivered);
    conflated.add(merged);
    for (const ms of latencies) watchLatency.add(ms);
  };
  const opened = (ws) => {
    ws.send(JSON.stringify({ type: "watch", markets: user.markets, batch }));
    awaitWindow(ws, done);
  };
  const received = (event) => {
    const now = Date.now();
    const raw = event.data;
    if (raw.startsWith('{"type":"image"')) {
      if (!isReady) {
        isReady = true;
        settled(startedAt);
      }
      return;
    }
    if (raw.startsWith('{"type":"market')) {
      if (now < measureFrom || now > stopAt) return;
      let at = 0;
      for (;;) {
        const [end, ts] = stamp(raw, at);
        if (end < 0) break;
        latencies.push(now - ts);
        delivered++;
        at = end;
      }
    } else if (raw.startsWith('{"type":"conflated"')) {
      merged += JSON.parse(raw).merged;
    } else {
      common(raw);
    }
  };
  socket({ Origin: origin, Cookie: cookie }, opened, received);
}

export default function () {
  const index = exec.vu.idInTest - 1;
  const user = plan[index];
  // Setups spread over the ramp, as visitors arrive, not all in one instant.
  const delay = plan.length > 1 ? (rampMs * index) / (plan.length - 1) : 0;
  setTimeout(() => {
    const startedAt = Date.now();
    if (user.role === "holder") holder(user, startedAt);
    else if (user.role === "follower") follower(user, startedAt);
    else watcher(user, startedAt);
  }, delay);
}

function value(data, metric, stat) {
  const m = data.metrics[metric];
  return m && m.values[stat] !== undefined ? m.values[stat] : 0;
}

export function handleSummary(data) {
  const summary = {
    channel_frames: value(data, "channel_frames", "count"),
    channel_markets: value(data, "channel_markets", "count"),
    channel_images: value(data, "channel_images", "count"),
    channel_gaps: value(data, "channel_gaps", "count"),
    channel_p50_ms: value(data, "channel_latency_ms", "p(50)"),
    channel_p99_ms: value(data, "channel_latency_ms", "p(99)"),
    channel_max_ms: value(data, "channel_latency_ms", "max"),
    watch_markets: value(data, "watch_markets", "count"),
    watch_conflated: value(data, "watch_conflated", "count"),
    watch_p50_ms: value(data, "watch_latency_ms", "p(50)"),
    watch_p99_ms: value(data, "watch_latency_ms", "p(99)"),
    watch_max_ms: value(data, "watch_latency_ms", "max"),
    query_frames: value(data, "query_frames", "count"),
    query_gaps: value(data, "query_gaps", "count"),
    stale_frames: value(data, "stale_frames", "count"),
    channels_created: value(data, "channels_created", "count"),
    create_failures: value(data, "create_failures", "count"),
    channels_attached: value(data, "channels_attached", "count"),
    channels_begun: value(data, "channels_begun", "count"),
    begin_failures: value(data, "begin_failures", "count"),
    queries_followed: value(data, "queries_followed", "count"),
    users_ready: value(data, "users_ready", "count"),
    late_setups: value(data, "late_setups", "count"),
    setup_p50_ms: value(data, "setup_ms", "p(50)"),
    setup_max_ms: value(data, "setup_ms", "max"),
    server_errors: value(data, "server_errors", "count"),
    socket_errors: value(data, "socket_errors", "count"),
    open_retries: value(data, "open_retries", "count"),
    logged_in: value(data, "logged_in", "count"),
  };
  return { [__ENV.SUMMARY]: JSON.stringify(summary) };
}
