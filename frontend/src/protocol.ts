// Websocket client for the live odds protocol (docs/protocol.md, version 1).
//
// Two kinds of data arrive on one socket:
// - public market frames for the markets watched (`watch`): the client keeps the newest state per
//   market by the market's own sequence, so duplicates and stale frames are ignored;
// - subscriber channel frames (`attach`): every frame carries the channel's sequence, which rises
//   by exactly one per frame. The client tracks the last sequence seen, drops duplicates, resumes
//   after a reconnect from that sequence, and asks for a fresh image whenever it sees a gap.
//   A gap is never silent: it is counted and repaired;
// - and, for a logged-in punter, their own news (`bet.decided`: a held in-play bet was decided).
// The connection is judged dead after 40 s without any frame (the server sends a heartbeat after
// 15 s of quiet, and answers our pings), and is then replaced.
import type { QueryIn } from "./contract/api";
import type {
  AttachMessage,
  BetLegsFrame,
  BetOffer,
  ClientMessage,
  BetSettledFrame,
  GameViewFrame,
  MarketFrame,
  MatchFrame,
  MatchMessage as MatchState,
  QueryFrame,
  ServerFrame,
  SessionEndedFrame,
  ViewFrame,
} from "./contract/frames";
import type { DeskFrame } from "./deskmodel";
import type { GamePublicFrame } from "./game";
import type { MatchMessage } from "./matchclock";
import type { BetDecision } from "./pending";

// The frames' types are generated from reducers/frames.py (src/contract/frames.ts); these names
// are the ones the pages use.
export type {
  BetCashOut,
  MarketStatusFrame,
  QueryFrame,
  SelectionState,
  ServerFrame,
  SlipLegSummary,
  SlipSummary,
  ViewFrame,
} from "./contract/frames";
export type MarketState = MarketFrame;
export type SessionEnded = SessionEndedFrame;
export type BetLegs = BetLegsFrame;
export type BetSettled = BetSettledFrame;
/** A subscriber channel's frame: its image or a delta (``view.image``, ``view.delta``), or new
 * match states of its events (``view.match``). */
export type ChannelFrame = ViewFrame | MatchFrame;

function isGameFrame(frame: ChannelFrame | GameViewFrame): frame is GameViewFrame {
  return frame.type === "game.image" || frame.type === "game.delta";
}

/** What a list follows: every condition given must hold (docs/protocol.md, *Shared query channels*). */
export type Query = QueryIn;

export interface QueryListener {
  /** Every market the query holds now (after a connect, a gap or a slow spell). */
  onImage(markets: number[], seq: number): void;
  /** Markets joined, left, or changed in what a list shows of them. */
  onChange(frame: QueryFrame): void;
}

/** The same query, whatever the order or absence of its conditions. */
export function queryKey(query: Query): string {
  const entries = Object.entries(query).filter(([, value]) => value !== null && value !== undefined);
  return JSON.stringify(Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
}

class QueryChannel {
  id: string | null = null;
  lastSeq = 0;
  awaitingImage = true;

  constructor(
    readonly query: Query,
    readonly listener: QueryListener,
  ) {}
}

export class MarketBook {
  private readonly markets = new Map<number, MarketState>();

  /**
   * Apply a market state; returns the previous state when the new one is newer, else null. A state
   * of the same sequence is newer when its status differs: the markets table changed the status
   * (a trader reopened the market) after that price was applied.
   */
  apply(state: MarketState): { previous: MarketState | undefined } | null {
    const current = this.markets.get(state.market_id);
    if (current !== undefined) {
      const restated = current.seq === state.seq && current.status !== state.status;
      if (current.seq > state.seq || (current.seq === state.seq && !restated)) return null;
    }
    this.markets.set(state.market_id, state);
    return { previous: current };
  }

  get(marketId: number): MarketState | undefined {
    return this.markets.get(marketId);
  }

  /**
   * What is held of these markets, as a `watch` frame's `since`: the server's image then leaves
   * out every market still at that sequence and status (docs/protocol.md).
   */
  held(marketIds: Iterable<number>): Held {
    const since: Held = {};
    for (const id of marketIds) {
      const state = this.markets.get(id);
      if (state !== undefined) since[String(id)] = [state.seq, state.status];
    }
    return since;
  }
}

export interface Socket {
  readyState: number;
  send(data: string): void;
  close(): void;
  onopen: ((ev: unknown) => void) | null;
  onclose: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
}

export type ConnectionStatus = "connecting" | "live" | "reconnecting" | "offline";

/** Receives one channel's frames, in sequence order, each exactly once. */
export interface ChannelListener {
  /** An image (``replace``: the channel's whole state) or a delta (the markets that changed). */
  onFrame(frame: ViewFrame, replace: boolean): void;
  /** The server no longer knows the channel: ``code`` is the reason of an ``ended`` frame
   * (expired, unsubscribed, ended_by_staff) or the error of a refused attach. */
  onLost?(code: string): void;
  /** The markets the channel's spec names: those the client holds are sent as `since` with a
   * begin, so the image leaves out the ones still current. */
  markets?(): number[];
  /** A game channel's image (``replace``) or delta (docs/protocol.md, ``game.image``). */
  onGame?(frame: GameViewFrame, replace: boolean): void;
}

/** Market id → [seq, status]: what a client holds of each market (docs/protocol.md, `since`). */
export type Held = Record<string, [number, string]>;

/** The HTTP half of the control flow (POST /api/streams/<id>/begin[?resync=1], body `{since}`). */
export interface ChannelControl {
  begin(channelId: string, resync: boolean, since: Held): Promise<void>;
}

export interface ClientOptions {
  url: string;
  markets: number[];
  /** Events whose match states the page shows (followed over the socket, anonymous visitors too). */
  events?: number[];
  /** Events whose predictor games the page shows (their public frames: questions, the top). */
  games?: number[];
  /** What the page was built with, market id → [seq, status] (a view snapshot's): sent as `since`. */
  held?: Held;
  onMarket: (state: MarketState, previous: MarketState | undefined) => void;
  onStatus: (status: ConnectionStatus) => void;
  onHello?: (user: string | null) => void;
  /** A bet held by the in-play delay was decided (the punter's own news, on every socket). */
  onBet?: (decision: BetDecision) => void;
  /** A trader offered another stake or price on a referred bet (the punter's own news). */
  onOffer?: (offer: BetOffer) => void;
  /** A bet of the punter closed (the punter's own news, on every socket). */
  onSettled?: (message: BetSettled) => void;
  /** Legs of an open bet of the punter were decided (a won leg of an accumulator). */
  onLegs?: (message: BetLegs) => void;
  /** The punter's session ended (logout elsewhere, a password change, the account closed): the
   * page is no longer theirs to show as it is. */
  onSessionEnded?: (reason: SessionEnded["reason"]) => void;
  /** A new match state of an event the page follows or of one of its channels. */
  onMatch?: (match: MatchMessage) => void;
  /** A public frame of a game the page follows (``game.state``, ``game.questions``, ``game.top``). */
  onGame?: (frame: GamePublicFrame) => void;
  onError?: (code: string, message: string) => void;
  /** Follow the trading desk's staff channels (``desk``): its ticker and liability frames. */
  onDesk?: (frame: DeskFrame) => void;
  control?: ChannelControl;
  connect?: (url: string) => Socket;
  schedule?: (fn: () => void, ms: number) => void;
  now?: () => number;
}

export const DEAD_AFTER_MS = 40_000;
export const PING_EVERY_MS = 15_000;
export const WATCHDOG_EVERY_MS = 5_000;
export const RESYNC_RETRY_MS = 5_000;

export interface ClientStats {
  connects: number;
  reconnects: number;
  /** Reconnects of a channel answered from the channel's log (missed frames replayed). */
  resumes: number;
  /** Fresh images asked for, or announced by the server, to repair a channel. */
  resyncs: number;
  /** Gaps seen in a channel's sequence (each one is followed by a resync). */
  gaps: number;
  /** Channel frames dropped because their sequence had been seen already. */
  duplicates: number;
  /** Connections given up after DEAD_AFTER_MS of silence. */
  silentDrops: number;
  /** Milliseconds from the reducer applying the latest market frame to this client applying it. */
  latencyMs: number | null;
  /** Status changes announced (``market.status``) for markets this client watches. */
  statusChanges: number;
  /** Market updates the server replaced by newer ones before it could send them (``conflated``). */
  conflated: number;
}

class Channel {
  lastSeq = 0;
  attached = false;
  attachSent = false;
  sentLastSeq: number | null = null;
  awaitingImage = true;
  resyncAskedAt: number | null = null;

  constructor(
    readonly id: string,
    readonly listener: ChannelListener,
    public begun: boolean,
  ) {}
}

export class OddsClient {
  readonly book = new MarketBook();
  readonly stats: ClientStats = {
    connects: 0,
    reconnects: 0,
    resumes: 0,
    resyncs: 0,
    gaps: 0,
    duplicates: 0,
    silentDrops: 0,
    latencyMs: null,
    statusChanges: 0,
    conflated: 0,
  };
  private readonly received = new Map<number, number>();
  private readonly watched: Set<number>;
  private readonly followed: Set<number>;
  private readonly games: Set<number>;
  private readonly channels = new Map<string, Channel>();
  private readonly queries = new Map<string, QueryChannel>();
  private socket: Socket | null = null;
  private generation = 0;
  private attempts = 0;
  private stopped = true;
  private lastHeard = 0;
  private lastSent = 0;

  constructor(private readonly options: ClientOptions) {
    this.watched = new Set(options.markets);
    this.followed = new Set(options.events ?? []);
    this.games = new Set(options.games ?? []);
  }

  // --- lifecycle ---

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.open();
  }

  stop(): void {
    this.stopped = true;
    this.generation += 1;
    const socket = this.socket;
    this.socket = null;
    if (socket !== null) this.detach(socket).close();
    this.options.onStatus("offline");
  }

  /** Replace the connection now, as if it had dropped (channels resume from their last sequence). */
  reconnect(): void {
    const socket = this.socket;
    if (socket === null || this.stopped) return;
    socket.close();
  }

  get connected(): boolean {
    return this.socket !== null && this.socket.readyState === 1;
  }

  // --- public market prices ---

  watch(markets: Iterable<number>): void {
    const added = [...markets].filter((m) => !this.watched.has(m));
    for (const m of added) this.watched.add(m);
    if (added.length > 0) this.sendWatch(added);
  }

  unwatch(markets: Iterable<number>): void {
    const removed = [...markets].filter((m) => this.watched.delete(m));
    if (removed.length > 0) this.send({ type: "unwatch", markets: removed });
  }

  /** Follow the match states of events (a ``matches`` frame, then each new ``match``). */
  follow(events: Iterable<number>): void {
    const added = [...events].filter((e) => !this.followed.has(e));
    for (const e of added) this.followed.add(e);
    if (added.length > 0) this.send({ type: "watch", markets: [], events: added });
  }

  unfollow(events: Iterable<number>): void {
    const removed = [...events].filter((e) => this.followed.delete(e));
    if (removed.length > 0) this.send({ type: "unwatch", markets: [], events: removed });
  }

  /** Follow the predictor games of events (a ``game.state`` frame each, then their changes). */
  followGames(events: Iterable<number>): void {
    const added = [...events].filter((e) => !this.games.has(e));
    for (const e of added) this.games.add(e);
    if (added.length > 0) this.send({ type: "watch", markets: [], games: added });
  }

  // --- shared query channels (the event lists) ---

  /** Follow a query's shared channel: which markets it holds, as they join and leave. Anyone may,
   * logged in or not; the server makes the channel if nobody holds it yet. */
  followQuery(query: Query, listener: QueryListener): void {
    const channel = new QueryChannel(query, listener);
    this.queries.set(queryKey(query), channel);
    if (this.connected) this.sendQuery(channel);
  }

  private sendQuery(channel: QueryChannel): void {
    channel.awaitingImage = channel.lastSeq === 0;
    this.send({ type: "query", query: { ...channel.query }, ...(channel.lastSeq > 0 ? { last_seq: channel.lastSeq } : {}) });
  }

  private queryOf(id: string): QueryChannel | undefined {
    return [...this.queries.values()].find((q) => q.id === id);
  }

  private queryFrame(frame: QueryFrame): void {
    const channel = this.queryOf(frame.channel);
    if (channel === undefined) return;
    if (frame.seq <= channel.lastSeq) {
      this.stats.duplicates += 1;
      return;
    }
    if (frame.image) {
      channel.lastSeq = frame.seq;
      channel.awaitingImage = false;
      channel.listener.onImage(frame.markets ?? [], frame.seq);
      return;
    }
    if (channel.awaitingImage) return;
    if (frame.seq !== channel.lastSeq + 1) {
      // A gap: ask again from scratch (the server answers with the channel's image).
      this.stats.gaps += 1;
      channel.lastSeq = 0;
      this.sendQuery(channel);
      return;
    }
    channel.lastSeq = frame.seq;
    channel.listener.onChange(frame);
  }

  // --- subscriber channels ---

  /**
   * Follow a channel created with POST /api/streams. ``begun``: the stream was begun before (a
   * channel reused from an earlier page), so an image is asked for with a resync instead.
   */
  attach(channelId: string, listener: ChannelListener, { begun = false }: { begun?: boolean } = {}): void {
    const channel = new Channel(channelId, listener, begun);
    this.channels.set(channelId, channel);
    if (this.connected) this.sendAttach(channel);
  }

  /** Stop following a channel (after DELETE /api/streams/<id>); its frames are ignored. */
  forget(channelId: string): void {
    this.channels.delete(channelId);
  }

  channelSeq(channelId: string): number | undefined {
    return this.channels.get(channelId)?.lastSeq;
  }

  /** Ask the reducers for a fresh image of the channel, flagged as a resync. */
  requestResync(channelId: string): void {
    const channel = this.channels.get(channelId);
    if (channel !== undefined) this.askResync(channel);
  }

  // --- frames from the server ---

  handle(frame: ServerFrame): void {
    this.lastHeard = this.now();
    switch (frame.type) {
      case "image":
        for (const state of frame.markets) this.update(state);
        break;
      case "market":
        this.update(frame);
        break;
      case "markets":
        for (const state of frame.items) this.update(state);
        break;
      case "market.status":
        // The market's state of the same sequence follows at once and carries the status with its
        // prices; applying the announcement alone would make the book hold that sequence with the
        // old prices and drop the state as already held.
        if (this.watched.has(frame.market_id)) this.stats.statusChanges += 1;
        break;
      case "conflated":
        this.stats.conflated += frame.merged;
        break;
      case "match":
        this.match(frame);
        break;
      case "matches":
        for (const match of frame.items) this.match(match);
        break;
      case "view.image":
      case "view.delta":
      case "view.match":
      case "game.image":
      case "game.delta":
        this.channelFrame(frame);
        break;
      case "game.state":
      case "game.questions":
      case "game.top":
        this.options.onGame?.(frame);
        break;
      case "view.query":
        this.queryFrame(frame);
        break;
      case "attached":
        if (frame.query !== undefined) {
          const channel = this.queries.get(queryKey(frame.query));
          if (channel !== undefined) channel.id = frame.channel;
          break;
        }
        this.attached(frame.channel);
        break;
      case "resumed":
        this.resumed(frame.channel, frame.resync);
        break;
      case "ended":
        this.ended(frame.channel, frame.reason);
        break;
      case "bet.decided":
        this.options.onBet?.(frame.bet);
        break;
      case "bet.offered":
        this.options.onOffer?.(frame.bet);
        break;
      case "bet.settled":
        this.options.onSettled?.(frame);
        break;
      case "session.ended":
        this.options.onSessionEnded?.(frame.reason);
        break;
      case "bet.legs":
        this.options.onLegs?.(frame);
        break;
      case "hello":
        this.attempts = 0;
        this.options.onStatus("live");
        this.options.onHello?.(frame.user);
        break;
      case "error":
        this.serverError(frame.code, frame.message);
        break;
      case "desk.bet":
      case "desk.liability":
      case "desk.movers":
      case "desk.followed":
        this.options.onDesk?.(frame);
        break;
      case "pong":
      case "heartbeat":
        // Only proof of life (lastHeard above).
        break;
      default: {
        const unhandled: never = frame;
        return unhandled;
      }
    }
  }

  /** A match state as the pages read it: its status, score and clock direction are the values
   * the reducers validated (reducers/schemas.py), which the generated type leaves as text. */
  private match(state: MatchState): void {
    this.options.onMatch?.(state as MatchMessage);
  }

  private update(state: MarketState): void {
    const applied = this.book.apply(state);
    if (applied === null) return;
    const now = this.now();
    this.received.set(state.market_id, now);
    if (state.ts !== undefined) this.stats.latencyMs = now - state.ts.reducer;
    this.options.onMarket(state, applied.previous);
  }

  /** When the market's current state arrived here (epoch ms). */
  receivedAt(marketId: number): number | undefined {
    return this.received.get(marketId);
  }

  private channelFrame(frame: ChannelFrame | GameViewFrame): void {
    const channel = this.channels.get(frame.channel);
    if (channel === undefined) return;
    if (frame.seq <= channel.lastSeq) {
      this.stats.duplicates += 1;
      return;
    }
    if (frame.type === "view.image" || frame.type === "game.image") {
      // An image is the channel's whole state: whatever came before it no longer matters.
      channel.lastSeq = frame.seq;
      channel.awaitingImage = false;
      channel.resyncAskedAt = null;
      this.deliver(channel, frame, true);
      return;
    }
    if (channel.awaitingImage) return; // the image on its way supersedes this delta
    if (frame.seq !== channel.lastSeq + 1) {
      this.stats.gaps += 1;
      this.askResync(channel);
      return;
    }
    channel.lastSeq = frame.seq;
    this.deliver(channel, frame, false);
  }

  private deliver(channel: Channel, frame: ChannelFrame | GameViewFrame, replace: boolean): void {
    if (isGameFrame(frame)) {
      channel.listener.onGame?.(frame, replace);
      return;
    }
    for (const match of frame.matches ?? []) this.match(match);
    if (frame.type === "view.match") return; // the channel's view (markets, slip, bets) is unchanged
    for (const state of frame.markets ?? []) this.update(state);
    channel.listener.onFrame(frame, replace);
  }

  private attached(channelId: string): void {
    const channel = this.channels.get(channelId);
    if (channel === undefined) return;
    channel.attached = true;
    if (channel.sentLastSeq !== null) return; // "resumed" follows
    if (!channel.begun) {
      channel.begun = true;
      // Counted from now, a missing first image is asked for again as a resync (watchdog).
      channel.resyncAskedAt = this.now();
      this.control(channel, false);
    } else {
      // Attached without a sequence to resume from: only an image can bring us up to date.
      this.askResync(channel);
    }
  }

  private resumed(channelId: string, resync: boolean): void {
    const channel = this.channels.get(channelId);
    if (channel === undefined) return;
    if (resync) {
      // The log no longer reaches back far enough; the server has asked for the image itself.
      this.stats.resyncs += 1;
      channel.awaitingImage = true;
      channel.resyncAskedAt = this.now();
    } else {
      this.stats.resumes += 1;
    }
  }

  /** The channel ended (expired, unsubscribed in another tab, ended by staff): its owner creates
   * a new one with the same spec (onLost), so the view recovers without a reload. */
  private ended(channelId: string, reason: string): void {
    const shared = this.queryOf(channelId);
    if (shared !== undefined) {
      // Nobody held it for a while and it was let go: ask for it again (it is made anew).
      shared.id = null;
      shared.lastSeq = 0;
      this.sendQuery(shared);
      return;
    }
    const channel = this.channels.get(channelId);
    if (channel === undefined) return;
    this.channels.delete(channelId);
    channel.listener.onLost?.(reason);
  }

  private serverError(code: string, message: string): void {
    if (code === "not_your_channel" || code === "bad_channel") {
      // Attach errors do not name the channel; they answer the oldest attach still unanswered.
      const pending = [...this.channels.values()].find((c) => c.attachSent && !c.attached);
      if (pending !== undefined) {
        this.channels.delete(pending.id);
        pending.listener.onLost?.(code);
        return;
      }
    }
    this.options.onError?.(code, message);
  }

  private askResync(channel: Channel): void {
    channel.awaitingImage = true;
    if (channel.resyncAskedAt !== null && this.now() - channel.resyncAskedAt < RESYNC_RETRY_MS) return;
    this.stats.resyncs += 1;
    channel.resyncAskedAt = this.now();
    this.control(channel, true);
  }

  private control(channel: Channel, resync: boolean): void {
    const control = this.options.control;
    if (control === undefined) return;
    control.begin(channel.id, resync, this.holding(channel.listener.markets?.() ?? [])).catch((error: unknown) => {
      const code = (error as { code?: unknown }).code;
      if (code === "no_such_channel" && this.channels.get(channel.id) === channel) {
        this.channels.delete(channel.id);
        channel.listener.onLost?.(code);
      }
      // Anything else (the network, a 503): the watchdog asks again after RESYNC_RETRY_MS.
    });
  }

  // --- the connection ---

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  private schedule(fn: () => void, ms: number): void {
    (this.options.schedule ?? ((f, t) => window.setTimeout(f, t)))(fn, ms);
  }

  /** What the client holds of these markets: the page's snapshot, then what arrived since. */
  private holding(markets: number[]): Held {
    const built = this.options.held ?? {};
    const since: Held = {};
    for (const id of markets) {
      const held = built[String(id)];
      if (held !== undefined) since[String(id)] = held;
    }
    Object.assign(since, this.book.held(markets)); // what arrived since is newer than the page
    return since;
  }

  /** Watch markets; the image leaves out those already held at their current state. */
  private sendWatch(markets: number[], events: number[] = [], games: number[] = []): void {
    const since = this.holding(markets);
    this.send({
      type: "watch",
      markets,
      ...(Object.keys(since).length > 0 ? { since } : {}),
      ...(events.length > 0 ? { events } : {}),
      ...(games.length > 0 ? { games } : {}),
    });
  }

  private send(message: ClientMessage): void {
    if (!this.connected || this.socket === null) return;
    this.socket.send(JSON.stringify(message));
    this.lastSent = this.now();
  }

  private sendAttach(channel: Channel): void {
    channel.attached = false;
    channel.attachSent = true;
    channel.sentLastSeq = channel.lastSeq > 0 ? channel.lastSeq : null;
    const message: AttachMessage = { type: "attach", channel: channel.id };
    if (channel.sentLastSeq !== null) message.last_seq = channel.sentLastSeq;
    this.send(message);
  }

  private detach(socket: Socket): Socket {
    socket.onopen = null;
    socket.onclose = null;
    socket.onmessage = null;
    return socket;
  }

  private open(): void {
    const connect = this.options.connect ?? ((url: string) => new WebSocket(url) as unknown as Socket);
    const generation = ++this.generation;
    const socket = connect(this.options.url);
    this.socket = socket;
    this.stats.connects += 1;
    if (this.attempts > 0) this.stats.reconnects += 1;
    this.options.onStatus(this.attempts === 0 ? "connecting" : "reconnecting");
    this.lastHeard = this.now();
    socket.onopen = () => {
      this.lastHeard = this.now();
      if (this.watched.size > 0 || this.followed.size > 0 || this.games.size > 0) {
        this.sendWatch([...this.watched], [...this.followed], [...this.games]);
      }
      for (const channel of this.channels.values()) this.sendAttach(channel);
      for (const channel of this.queries.values()) this.sendQuery(channel);
      if (this.options.onDesk) this.send({ type: "desk" });
    };
    socket.onmessage = (ev) => {
      if (typeof ev.data !== "string") return;
      let frame: ServerFrame;
      try {
        frame = JSON.parse(ev.data) as ServerFrame;
      } catch {
        return;
      }
      this.handle(frame);
    };
    socket.onclose = () => this.lost(generation);
    this.schedule(() => this.tick(generation), WATCHDOG_EVERY_MS);
  }

  private lost(generation: number): void {
    if (generation !== this.generation || this.stopped) return;
    const socket = this.socket;
    if (socket !== null) this.detach(socket);
    this.socket = null;
    for (const channel of this.channels.values()) {
      channel.attached = false;
      channel.attachSent = false;
    }
    this.attempts += 1;
    // Exponential back-off with jitter: half the step, plus a random share of the other half, so
    // the clients a restart or a storm of handshakes dropped do not come back in lock-step.
    const step = Math.min(5000, 250 * 2 ** Math.min(this.attempts, 5));
    const delay = step / 2 + Math.random() * (step / 2);
    this.options.onStatus("reconnecting");
    this.schedule(() => {
      if (!this.stopped && this.socket === null) this.open();
    }, delay);
  }

  /** Liveness and repairs: every WATCHDOG_EVERY_MS while this connection is current. */
  private tick(generation: number): void {
    if (generation !== this.generation || this.stopped) return;
    const now = this.now();
    if (now - this.lastHeard > DEAD_AFTER_MS) {
      // Silent for too long: the socket may look open while nothing arrives. Replace it.
      this.stats.silentDrops += 1;
      const socket = this.socket;
      if (socket !== null) this.detach(socket).close();
      this.lost(generation);
      return;
    }
    if (this.connected && now - this.lastSent >= PING_EVERY_MS) this.send({ type: "ping" });
    for (const channel of this.channels.values()) {
      if (channel.awaitingImage && channel.resyncAskedAt !== null && now - channel.resyncAskedAt >= RESYNC_RETRY_MS) {
        this.askResync(channel);
      }
    }
    this.schedule(() => this.tick(generation), WATCHDOG_EVERY_MS);
  }
}
