// Websocket client for the live odds protocol (docs/protocol.md, version 1).
// Keeps the newest state per market by sequence, so duplicates and stale frames are ignored.

export interface SelectionState {
  id: number;
  price: string;
  status: string;
}

export interface MarketState {
  type: "market";
  market_id: number;
  seq: number;
  status: string;
  tradable: boolean;
  selections: SelectionState[];
  merged?: number;
  ts?: { event: number; produce: number; kafka: number; reducer: number };
}

export type ServerFrame =
  | { type: "hello"; v: number; user: string | null }
  | { type: "image"; v: number; markets: MarketState[] }
  | MarketState
  | { type: "pong"; ts: number }
  | { type: "error"; code: string; message: string };

export class MarketBook {
  private readonly markets = new Map<number, MarketState>();

  /** Apply a market state; returns the previous state when the new one is newer, else null. */
  apply(state: MarketState): { previous: MarketState | undefined } | null {
    const current = this.markets.get(state.market_id);
    if (current !== undefined && current.seq >= state.seq) return null;
    this.markets.set(state.market_id, state);
    return { previous: current };
  }

  get(marketId: number): MarketState | undefined {
    return this.markets.get(marketId);
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

export interface ClientOptions {
  url: string;
  markets: number[];
  onMarket: (state: MarketState, previous: MarketState | undefined) => void;
  onStatus: (status: "connecting" | "live" | "reconnecting") => void;
  connect?: (url: string) => Socket;
  schedule?: (fn: () => void, ms: number) => void;
}

export class OddsClient {
  readonly book = new MarketBook();
  private socket: Socket | null = null;
  private attempts = 0;
  private stopped = false;

  constructor(private readonly options: ClientOptions) {}

  start(): void {
    this.stopped = false;
    this.open();
  }

  stop(): void {
    this.stopped = true;
    this.socket?.close();
  }

  handle(frame: ServerFrame): void {
    if (frame.type === "image") {
      for (const state of frame.markets) this.update(state);
    } else if (frame.type === "market") {
      this.update(frame);
    } else if (frame.type === "hello") {
      this.attempts = 0;
      this.options.onStatus("live");
    }
  }

  private update(state: MarketState): void {
    const applied = this.book.apply(state);
    if (applied !== null) this.options.onMarket(state, applied.previous);
  }

  private open(): void {
    const connect = this.options.connect ?? ((url: string) => new WebSocket(url) as unknown as Socket);
    const socket = connect(this.options.url);
    this.socket = socket;
    this.options.onStatus(this.attempts === 0 ? "connecting" : "reconnecting");
    socket.onopen = () => {
      if (this.options.markets.length > 0) {
        socket.send(JSON.stringify({ type: "watch", markets: this.options.markets }));
      }
    };
    socket.onmessage = (ev) => {
      if (typeof ev.data !== "string") return;
      this.handle(JSON.parse(ev.data) as ServerFrame);
    };
    socket.onclose = () => {
      if (this.stopped) return;
      this.attempts += 1;
      const delay = Math.min(5000, 250 * 2 ** Math.min(this.attempts, 5));
      this.options.onStatus("reconnecting");
      (this.options.schedule ?? ((fn, ms) => setTimeout(fn, ms)))(() => this.open(), delay);
    };
  }
}
