import { describe, expect, it, vi } from "vitest";
import type { StreamSpec } from "../src/api";
import { ManagedChannel } from "../src/channels";
import type { MatchMessage } from "../src/matchclock";
import {
  type ChannelFrame,
  type ChannelListener,
  DEAD_AFTER_MS,
  MarketBook,
  type MarketState,
  OddsClient,
  type Socket,
} from "../src/protocol";

function market(id: number, seq: number, price = "2.00"): MarketState {
  return { type: "market", v: 1, market_id: id, seq, status: "open", tradable: true, selections: [{ id: 1, price, status: "active" }] };
}

class FakeSocket implements Socket {
  readyState = 0;
  sent: Record<string, unknown>[] = [];
  closed = false;
  onopen: ((ev: unknown) => void) | null = null;
  onclose: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  send(data: string): void {
    this.sent.push(JSON.parse(data) as Record<string, unknown>);
  }
  close(): void {
    this.closed = true;
    this.readyState = 3;
    this.onclose?.({});
  }
  open(): void {
    this.readyState = 1;
    this.onopen?.({});
    this.receive({ type: "hello", v: 1, user: "alice" });
  }
  receive(frame: object): void {
    this.onmessage?.({ data: JSON.stringify(frame) });
  }
  sentOf(type: string): Record<string, unknown>[] {
    return this.sent.filter((m) => m.type === type);
  }
}

/** Timers under the test's control. */
class Clock {
  time = 1_000_000;
  private timers: { at: number; fn: () => void }[] = [];
  now = (): number => this.time;
  schedule = (fn: () => void, ms: number): void => {
    this.timers.push({ at: this.time + ms, fn });
  };
  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at);
      const next = this.timers[0];
      if (next === undefined || next.at > end) break;
      this.timers.shift();
      this.time = next.at;
      next.fn();
    }
    this.time = end;
  }
}

interface Harness {
  client: OddsClient;
  clock: Clock;
  sockets: FakeSocket[];
  begins: [string, boolean][];
  sinces: Record<string, [number, string]>[];
  markets: number[];
  matches: number[];
  socket(): FakeSocket;
}

function harness(markets: number[] = [], beginFails = false): Harness {
  const clock = new Clock();
  const sockets: FakeSocket[] = [];
  const begins: [string, boolean][] = [];
  const sinces: Record<string, [number, string]>[] = [];
  const seen: number[] = [];
  const matches: number[] = [];
  const client = new OddsClient({
    url: "ws://test",
    markets,
    connect: () => {
      const s = new FakeSocket();
      sockets.push(s);
      return s;
    },
    onMarket: (state) => seen.push(state.seq),
    onMatch: (match) => matches.push(match.seq),
    onStatus: () => undefined,
    control: {
      begin: (channel, resync, since) => {
        begins.push([channel, resync]);
        sinces.push(since);
        return beginFails ? Promise.reject(Object.assign(new Error("gone"), { code: "no_such_channel" })) : Promise.resolve();
      },
    },
    schedule: clock.schedule,
    now: clock.now,
  });
  client.start();
  return { client, clock, sockets, begins, sinces, markets: seen, matches, socket: () => sockets[sockets.length - 1]! };
}

const CH = "c".repeat(32);

const FOOTBALL_MATCH: MatchMessage = {
  type: "match",
  v: 1,
  event_id: 9,
  seq: 1,
  sport: "football",
  status: "in_play",
  period: 1,
  score: { home: 1, away: 0 },
  clock: { running: true, elapsed_s: 60, at: 1, direction: "up", limit_s: null, rate: 1 },
  incidents: [],
  ts: { event: 1, produce: 1, kafka: 1, reducer: 1 },
};

function frame(seq: number, kind: "image" | "delta" | "match", extra: Partial<ChannelFrame> = {}): ChannelFrame {
  return { seq, type: `view.${kind}`, v: 1, channel: CH, markets: [], ...extra } as ChannelFrame;
}

function recorder(): ChannelListener & { frames: [number, boolean][]; lost: string[] } {
  const frames: [number, boolean][] = [];
  const lost: string[] = [];
  return { frames, lost, onFrame: (f, replace) => frames.push([f.seq, replace]), onLost: (code) => lost.push(code) };
}

describe("MarketBook", () => {
  it("applies newer sequences and ignores duplicates and stale frames", () => {
    const book = new MarketBook();
    expect(book.apply(market(1, 5))).not.toBeNull();
    expect(book.apply(market(1, 5))).toBeNull();
    expect(book.apply(market(1, 4))).toBeNull();
    expect(book.apply(market(1, 6, "2.10"))?.previous?.seq).toBe(5);
    expect(book.get(1)?.selections[0]?.price).toBe("2.10");
  });

  it("takes a state of the same sequence whose status the markets table changed", () => {
    const book = new MarketBook();
    book.apply({ ...market(1, 5), status: "suspended", tradable: false });
    expect(book.apply(market(1, 5))?.previous?.status).toBe("suspended");
    expect(book.get(1)?.tradable).toBe(true);
    expect(book.apply(market(1, 5))).toBeNull();
    expect(book.apply({ ...market(1, 4), status: "suspended", tradable: false })).toBeNull();
  });

  it("names the sequence and status it holds of each market it has", () => {
    const book = new MarketBook();
    book.apply(market(1, 5));
    book.apply({ ...market(2, 9), status: "suspended", tradable: false });
    expect(book.held([1, 2, 3])).toEqual({ "1": [5, "open"], "2": [9, "suspended"] });
  });
});

describe("OddsClient: public prices", () => {
  it("watches its markets on open, applies the image, then only newer deltas", () => {
    const h = harness([1, 2]);
    h.socket().open();
    expect(h.socket().sent[0]).toEqual({ type: "watch", markets: [1, 2] });
    h.socket().receive({ type: "image", v: 1, markets: [market(1, 3)] });
    h.socket().receive(market(1, 2));
    h.socket().receive(market(1, 4));
    expect(h.markets).toEqual([3, 4]);
  });

  it("reconnects after the socket closes and watches every market again", () => {
    const h = harness([7]);
    h.socket().open();
    h.client.watch([8]);
    h.socket().close();
    h.clock.advance(1000);
    expect(h.sockets).toHaveLength(2);
    h.socket().open();
    expect(h.socket().sent[0]).toEqual({ type: "watch", markets: [7, 8] });
    expect(h.client.stats.reconnects).toBe(1);
  });

  it("spreads its reconnects: half the back-off step plus a random share of the other half", () => {
    const spy = vi.spyOn(Math, "random");
    try {
      for (const [random, opensBy] of [
        [0, 250],
        [0.999, 500],
      ] as const) {
        spy.mockReturnValue(random);
        const h = harness([7]);
        h.socket().open();
        h.socket().close();
        h.clock.advance(opensBy - 1);
        expect(h.sockets).toHaveLength(1);
        h.clock.advance(1);
        expect(h.sockets).toHaveLength(2);
      }
    } finally {
      spy.mockRestore();
    }
  });

  it("watches first with what the page was built with, and later with what arrived since", () => {
    const sockets: FakeSocket[] = [];
    const client = new OddsClient({
      url: "ws://test/ws/odds/",
      markets: [7, 8],
      held: { "7": [3, "open"], "8": [5, "open"], "9": [1, "open"] },
      onMarket: () => {},
      onStatus: () => {},
      connect: () => {
        const socket = new FakeSocket();
        sockets.push(socket);
        return socket;
      },
      schedule: () => {},
      now: () => 0,
    });
    client.start();
    sockets[0]!.open();
    expect(sockets[0]!.sent[0]).toEqual({ type: "watch", markets: [7, 8], since: { "7": [3, "open"], "8": [5, "open"] } });
    sockets[0]!.receive({ type: "image", v: 1, markets: [market(8, 6)] });
    client.watch([9]);
    expect(sockets[0]!.sent[sockets[0]!.sent.length - 1]).toEqual({ type: "watch", markets: [9], since: { "9": [1, "open"] } });
    client.unwatch([8]);
    client.watch([8]);
    expect(sockets[0]!.sent[sockets[0]!.sent.length - 1]).toEqual({ type: "watch", markets: [8], since: { "8": [6, "open"] } });
  });

  it("watches again after a reconnect saying what it holds, so the image carries only what moved", () => {
    const h = harness([7, 8]);
    h.socket().open();
    h.socket().receive({ type: "image", v: 1, markets: [market(7, 3), { ...market(8, 5), status: "suspended" }] });
    h.socket().close();
    h.clock.advance(1000);
    h.socket().open();
    expect(h.socket().sent[0]).toEqual({
      type: "watch",
      markets: [7, 8],
      since: { "7": [3, "open"], "8": [5, "suspended"] },
    });
  });
});

describe("OddsClient: every frame type the server sends", () => {
  it("takes a status change as notice and the state that follows with its prices", () => {
    const h = harness([1]);
    h.socket().open();
    h.socket().receive({ type: "image", v: 1, markets: [market(1, 1, "2.00")] });
    h.socket().receive({ type: "market.status", v: 1, market_id: 1, seq: 2, status: "suspended", tradable: false });
    expect(h.client.book.get(1)?.seq).toBe(1);
    h.socket().receive({ ...market(1, 2, "2.40"), status: "suspended", tradable: false });
    expect(h.client.book.get(1)).toMatchObject({ seq: 2, status: "suspended", selections: [{ price: "2.40" }] });
    expect(h.client.stats.statusChanges).toBe(1);
    expect(h.markets).toEqual([1, 2]);
  });

  it("applies every market of a batched frame and counts what the server conflated", () => {
    const h = harness([1, 2]);
    h.socket().open();
    h.socket().receive({ type: "markets", items: [market(1, 3), market(2, 4)] });
    h.socket().receive({ type: "conflated", merged: 5 });
    expect([h.client.book.get(1)?.seq, h.client.book.get(2)?.seq]).toEqual([3, 4]);
    expect(h.client.stats.conflated).toBe(5);
  });

  it("takes pong and heartbeat as proof of life only", () => {
    const h = harness([1]);
    h.socket().open();
    h.socket().receive({ type: "heartbeat", ts: 1 });
    h.socket().receive({ type: "pong", ts: 2 });
    expect(h.markets).toEqual([]);
    expect(h.socket().closed).toBe(false);
  });
});

describe("OddsClient: subscriber channels", () => {
  it("attaches, begins only once attached, then takes the image and the following deltas", () => {
    const h = harness();
    const listener = recorder();
    h.client.attach(CH, listener);
    h.socket().open();
    expect(h.socket().sentOf("attach")).toEqual([{ type: "attach", channel: CH }]);
    expect(h.begins).toEqual([]);
    h.socket().receive({ type: "attached", channel: CH });
    expect(h.begins).toEqual([[CH, false]]);
    h.socket().receive(frame(1, "image", { markets: [market(5, 10)] }));
    h.socket().receive(frame(2, "delta", { markets: [market(5, 11)] }));
    expect(listener.frames).toEqual([
      [1, true],
      [2, false],
    ]);
    expect(h.markets).toEqual([10, 11]);
    expect(h.client.channelSeq(CH)).toBe(2);
  });

  it("begins saying what it holds of the channel's markets, so the image carries only what moved", () => {
    const h = harness([5, 6]);
    const listener = { ...recorder(), markets: () => [5, 7] };
    h.client.attach(CH, listener);
    h.socket().open();
    h.socket().receive({ type: "image", v: 1, markets: [market(5, 10), market(6, 4)] });
    h.socket().receive({ type: "attached", channel: CH });
    // Market 6 is held but not the channel's; market 7 is the channel's but not held.
    expect(h.begins).toEqual([[CH, false]]);
    expect(h.sinces).toEqual([{ "5": [10, "open"] }]);
    // A partial image leaves the held market as it was, and later deltas apply as usual.
    h.socket().receive(frame(1, "image", { markets: [market(7, 2)], since: true }));
    h.socket().receive(frame(2, "delta", { markets: [market(5, 11)] }));
    expect(listener.frames).toEqual([
      [1, true],
      [2, false],
    ]);
    expect(h.client.book.get(5)?.seq).toBe(11);
    expect(h.client.book.get(7)?.seq).toBe(2);
  });

  it("hands on match states of the image and of match frames, in the channel's sequence", () => {
    const h = harness();
    const listener = recorder();
    h.client.attach(CH, listener);
    h.socket().open();
    h.socket().receive({ type: "attached", channel: CH });
    const match = (seq: number) => ({ ...FOOTBALL_MATCH, seq });
    h.socket().receive(frame(1, "image", { markets: [market(5, 10)], matches: [match(3)] }));
    h.socket().receive(frame(2, "match", { matches: [match(4)] }));
    h.socket().receive(frame(3, "delta", { markets: [market(5, 11)] }));
    expect(h.matches).toEqual([3, 4]);
    expect(listener.frames).toEqual([
      [1, true],
      [3, false],
    ]);
    expect(h.client.stats.gaps).toBe(0);
    expect(h.client.channelSeq(CH)).toBe(3);
  });

  it("drops a frame whose sequence was seen already", () => {
    const h = harness();
    const listener = recorder();
    h.client.attach(CH, listener);
    h.socket().open();
    h.socket().receive({ type: "attached", channel: CH });
    h.socket().receive(frame(1, "image"));
    h.socket().receive(frame(2, "delta"));
    h.socket().receive(frame(2, "delta"));
    h.socket().receive(frame(1, "image"));
    expect(listener.frames.map(([seq]) => seq)).toEqual([1, 2]);
    expect(h.client.stats.duplicates).toBe(2);
  });

  it("resumes after a reconnect from the last sequence seen, without a gap", () => {
    const h = harness();
    const listener = recorder();
    h.client.attach(CH, listener);
    h.socket().open();
    h.socket().receive({ type: "attached", channel: CH });
    h.socket().receive(frame(1, "image"));
    h.socket().receive(frame(2, "delta"));
    h.socket().close();
    h.clock.advance(1000);
    h.socket().open();
    expect(h.socket().sentOf("attach")).toEqual([{ type: "attach", channel: CH, last_seq: 2 }]);
    h.socket().receive({ type: "attached", channel: CH });
    h.socket().receive({ type: "resumed", channel: CH, after: 2, count: 2, resync: false });
    h.socket().receive(frame(3, "delta"));
    h.socket().receive(frame(4, "delta"));
    h.socket().receive(frame(4, "delta")); // the live copy of a frame replayed from the log
    h.socket().receive(frame(5, "delta"));
    expect(listener.frames.map(([seq]) => seq)).toEqual([1, 2, 3, 4, 5]);
    expect(h.client.stats).toMatchObject({ resumes: 1, gaps: 0, resyncs: 0, duplicates: 1 });
    expect(h.begins).toEqual([[CH, false]]);
  });

  it("asks for a resync when the sequence jumps, and the resync image replaces the state", () => {
    const h = harness();
    const listener = recorder();
    h.client.attach(CH, listener);
    h.socket().open();
    h.socket().receive({ type: "attached", channel: CH });
    h.socket().receive(frame(1, "image"));
    h.socket().receive(frame(2, "delta"));
    h.socket().receive(frame(4, "delta")); // 3 is missing
    expect(h.client.stats.gaps).toBe(1);
    expect(h.begins).toEqual([
      [CH, false],
      [CH, true],
    ]);
    h.socket().receive(frame(5, "delta")); // superseded by the image on its way
    h.socket().receive(frame(6, "image", { resync: true }));
    h.socket().receive(frame(7, "delta"));
    expect(listener.frames).toEqual([
      [1, true],
      [2, false],
      [6, true],
      [7, false],
    ]);
  });

  it("waits for the server's resync image when the log no longer reaches back", () => {
    const h = harness();
    const listener = recorder();
    h.client.attach(CH, listener);
    h.socket().open();
    h.socket().receive({ type: "attached", channel: CH });
    h.socket().receive(frame(1, "image"));
    h.socket().close();
    h.clock.advance(1000);
    h.socket().open();
    h.socket().receive({ type: "attached", channel: CH });
    h.socket().receive({ type: "resumed", channel: CH, after: 1, count: 0, resync: true });
    h.socket().receive(frame(400, "delta"));
    h.socket().receive(frame(401, "image", { resync: true }));
    expect(listener.frames).toEqual([
      [1, true],
      [401, true],
    ]);
    expect(h.client.stats).toMatchObject({ resyncs: 1, gaps: 0 });
    expect(h.begins).toEqual([[CH, false]]); // the server asked for the image itself
  });

  it("asks again when a resync image does not come", () => {
    const h = harness();
    h.client.attach(CH, recorder());
    h.socket().open();
    h.socket().receive({ type: "attached", channel: CH });
    h.socket().receive(frame(1, "image"));
    h.socket().receive(frame(3, "delta"));
    h.clock.advance(4000);
    h.socket().receive({ type: "heartbeat", ts: 1 });
    h.clock.advance(4000);
    expect(h.begins.filter(([, resync]) => resync)).toHaveLength(2);
  });

  it("asks for an image with a resync when a channel from an earlier page is attached", () => {
    const h = harness();
    const listener = recorder();
    h.client.attach(CH, listener, { begun: true });
    h.socket().open();
    h.socket().receive({ type: "attached", channel: CH });
    expect(h.begins).toEqual([[CH, true]]);
    h.socket().receive(frame(40, "image", { resync: true }));
    expect(listener.frames).toEqual([[40, true]]);
  });

  it("tells the owner when the server no longer knows the channel", async () => {
    const h = harness();
    const listener = recorder();
    h.client.attach(CH, listener, { begun: true });
    h.socket().open();
    h.socket().receive({ type: "error", code: "not_your_channel", message: "no such channel for this session" });
    expect(listener.lost).toEqual(["not_your_channel"]);
    h.socket().receive(frame(1, "image"));
    expect(listener.frames).toEqual([]);
  });

  it("tells the owner when begin answers that the channel is gone", async () => {
    const h = harness([], true);
    const listener = recorder();
    h.client.attach(CH, listener);
    h.socket().open();
    h.socket().receive({ type: "attached", channel: CH });
    await Promise.resolve();
    await Promise.resolve();
    expect(listener.lost).toEqual(["no_such_channel"]);
  });
});

describe("OddsClient: heartbeats", () => {
  it("pings after a quiet spell so the server hears from us", () => {
    const h = harness([1]);
    h.socket().open();
    h.clock.advance(20_000);
    expect(h.socket().sentOf("ping").length).toBeGreaterThanOrEqual(1);
  });

  it("keeps a connection that hears heartbeats", () => {
    const h = harness([1]);
    h.socket().open();
    for (let i = 0; i < 6; i++) {
      h.clock.advance(15_000);
      h.socket().receive({ type: "heartbeat", ts: i });
    }
    expect(h.sockets).toHaveLength(1);
    expect(h.client.stats.silentDrops).toBe(0);
  });

  it("replaces a connection silent for more than 40 s and resumes its channels", () => {
    const h = harness([1]);
    h.client.attach(CH, recorder());
    h.socket().open();
    h.socket().receive({ type: "attached", channel: CH });
    h.socket().receive(frame(1, "image"));
    const first = h.socket();
    h.clock.advance(DEAD_AFTER_MS + 6_000);
    expect(first.closed).toBe(true);
    expect(h.client.stats.silentDrops).toBe(1);
    expect(h.sockets).toHaveLength(2);
    h.socket().open();
    expect(h.socket().sentOf("attach")).toEqual([{ type: "attach", channel: CH, last_seq: 1 }]);
  });
});

describe("OddsClient: ended channels", () => {
  it("tells the channel's owner why it ended and ignores its later frames", () => {
    const h = harness();
    const listener = recorder();
    h.client.attach(CH, listener);
    h.socket().open();
    h.socket().receive({ type: "attached", channel: CH });
    h.socket().receive(frame(1, "image"));
    h.socket().receive({ type: "ended", channel: CH, reason: "expired" });
    h.socket().receive(frame(2, "delta"));
    expect(listener.lost).toEqual(["expired"]);
    expect(listener.frames.map(([seq]) => seq)).toEqual([1]);
    expect(h.client.channelSeq(CH)).toBeUndefined();
  });

  it("ignores the end of a channel it does not follow", () => {
    const h = harness();
    const listener = recorder();
    h.client.attach(CH, listener);
    h.socket().open();
    h.socket().receive({ type: "ended", channel: "d".repeat(32), reason: "unsubscribed" });
    expect(listener.lost).toEqual([]);
  });

  it("recovers a managed view: a new channel with the same spec is created, attached and begun", async () => {
    const h = harness();
    const specs: StreamSpec[] = [];
    let next = 0;
    const managed = new ManagedChannel(h.client, "slip", () => undefined, {
      control: {
        subscribe: async (spec) => {
          specs.push(spec);
          return { v: 1, channel: `${++next}`.repeat(32) };
        },
        change: async () => ({}),
        unsubscribe: async () => ({}),
      },
      store: null,
      setTimer: (fn) => {
        queueMicrotask(fn);
        return 0;
      },
      clearTimer: () => undefined,
    });
    const spec: StreamSpec = { view: "slip", slip: [{ selection_id: 1, market_id: 10 }], stake: null };
    h.socket().open();
    managed.set(spec, { now: true });
    await managed.sync();
    const first = "1".repeat(32);
    h.socket().receive({ type: "attached", channel: first });
    expect(h.begins).toEqual([[first, false]]);

    h.socket().receive({ type: "ended", channel: first, reason: "ended_by_staff" });
    await managed.sync();
    const second = "2".repeat(32);
    expect(specs).toEqual([spec, spec]);
    expect(managed.id).toBe(second);
    expect(h.socket().sentOf("attach")).toEqual([
      { type: "attach", channel: first },
      { type: "attach", channel: second },
    ]);
    h.socket().receive({ type: "attached", channel: second });
    expect(h.begins).toEqual([
      [first, false],
      [second, false],
    ]);
  });
});

describe("followed events", () => {
  it("asks for the page's events with its markets on every connection", () => {
    const clock = new Clock();
    const sockets: FakeSocket[] = [];
    const client = new OddsClient({
      url: "ws://test",
      markets: [42],
      events: [9, 10],
      connect: () => {
        const s = new FakeSocket();
        sockets.push(s);
        return s;
      },
      onMarket: () => undefined,
      onStatus: () => undefined,
      schedule: clock.schedule,
      now: clock.now,
    });
    client.start();
    sockets[0]!.open();
    expect(sockets[0]!.sentOf("watch")).toEqual([{ type: "watch", markets: [42], events: [9, 10] }]);
    sockets[0]!.close();
    clock.advance(10_000);
    sockets[1]!.open();
    expect(sockets[1]!.sentOf("watch")).toEqual([{ type: "watch", markets: [42], events: [9, 10] }]);
  });

  it("hands every match state of a followed event to the page, the first ones in one frame", () => {
    const h = harness();
    h.socket().open();
    h.client.follow([9]);
    expect(h.socket().sentOf("watch")).toEqual([{ type: "watch", markets: [], events: [9] }]);
    h.socket().receive({ type: "matches", v: 1, items: [{ ...FOOTBALL_MATCH, seq: 3 }] });
    h.socket().receive({ ...FOOTBALL_MATCH, seq: 4 });
    expect(h.matches).toEqual([3, 4]);
    h.client.unfollow([9]);
    expect(h.socket().sentOf("unwatch")).toEqual([{ type: "unwatch", markets: [], events: [9] }]);
  });
});

describe("sessions that end", () => {
  it("tells the page why its session ended", () => {
    const ended: string[] = [];
    const sockets: FakeSocket[] = [];
    const client = new OddsClient({
      url: "ws://test",
      markets: [],
      connect: () => {
        const s = new FakeSocket();
        sockets.push(s);
        return s;
      },
      onMarket: () => undefined,
      onStatus: () => undefined,
      onSessionEnded: (reason) => ended.push(reason),
      schedule: () => undefined,
      now: () => 0,
    });
    client.start();
    sockets[0]!.open();
    sockets[0]!.receive({ type: "session.ended", v: 1, reason: "logged_out" });
    expect(ended).toEqual(["logged_out"]);
  });
});
