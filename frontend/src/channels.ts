// A subscriber channel kept in step with what the page wants: created with POST /api/streams,
// changed with PUT when the spec changes, removed with DELETE when nothing is wanted. The id is
// kept for the browser tab, so the next page attaches to the same channel instead of creating
// another (subscriptions are rate limited per user).
import { ApiError, api, specMarkets, type StreamSpec } from "./api";
import type { ChannelCreated } from "./contract/api";
import { readJSON, storage, writeJSON } from "./dom";
import type { ChannelListener, ViewFrame } from "./protocol";

const DEBOUNCE_MS = 200;
const RETRY_MS = 3000;

/** The part of the websocket client a managed channel uses. */
export interface ChannelHost {
  attach(channelId: string, listener: ChannelListener, options?: { begun?: boolean }): void;
  forget(channelId: string): void;
}

/** What a managed channel asks of the control API (``api``): a new channel's id; the answers to
 * a change or an end are not read. */
export interface ChannelControlApi {
  subscribe(spec: StreamSpec): Promise<Pick<ChannelCreated, "channel">>;
  change(channel: string, spec: StreamSpec): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
}

export interface ChannelDeps {
  control: ChannelControlApi;
  store: Storage | null;
  setTimer: (fn: () => void, ms: number) => number;
  clearTimer: (id: number) => void;
}

function browserDeps(): ChannelDeps {
  return {
    control: api,
    store: storage("session"),
    setTimer: (fn, ms) => window.setTimeout(fn, ms),
    clearTimer: (id) => window.clearTimeout(id),
  };
}

export class ManagedChannel {
  private channelId: string | null = null;
  private sentKey: string | null = null;
  private desired: StreamSpec | null = null;
  private busy = false;
  private timer: number | null = null;

  constructor(
    private readonly client: ChannelHost,
    private readonly storageKey: string,
    private readonly onFrame: (frame: ViewFrame, replace: boolean) => void,
    private readonly deps: ChannelDeps = browserDeps(),
  ) {
    const saved = readJSON(deps.store, storageKey) as { id?: unknown; key?: unknown } | null;
    if (saved !== null && typeof saved.id === "string" && typeof saved.key === "string") {
      this.channelId = saved.id;
      this.sentKey = saved.key;
      this.client.attach(saved.id, this.listener(), { begun: true });
    }
  }

  get id(): string | null {
    return this.channelId;
  }

  /** What the channel should stream now; ``null`` ends it. */
  set(spec: StreamSpec | null, { now = false }: { now?: boolean } = {}): void {
    this.desired = spec;
    this.later(now ? 0 : DEBOUNCE_MS);
  }

  private listener() {
    return {
      onFrame: (frame: ViewFrame, replace: boolean) => this.onFrame(frame, replace),
      onLost: () => {
        this.channelId = null;
        this.sentKey = null;
        this.save();
        this.later(0);
      },
      markets: () => (this.desired === null ? [] : specMarkets(this.desired)),
    };
  }

  private later(ms: number): void {
    if (this.timer !== null) this.deps.clearTimer(this.timer);
    this.timer = this.deps.setTimer(() => {
      this.timer = null;
      void this.sync();
    }, ms);
  }

  private save(): void {
    writeJSON(
      this.deps.store,
      this.storageKey,
      this.channelId === null ? null : { id: this.channelId, key: this.sentKey },
    );
  }

  /** Bring the server in line with the wanted spec now (tests, and the debounce timer). */
  async sync(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      for (;;) {
        const desired = this.desired;
        const key = desired === null ? null : JSON.stringify(desired);
        if (key === this.sentKey && (key === null) === (this.channelId === null)) break;
        if (desired === null || key === null) {
          const id = this.channelId;
          this.channelId = null;
          this.sentKey = null;
          this.save();
          if (id !== null) {
            this.client.forget(id);
            await this.deps.control.unsubscribe(id).catch(() => undefined);
          }
          continue;
        }
        if (this.channelId === null) {
          const created = await this.deps.control.subscribe(desired);
          this.channelId = created.channel;
          this.sentKey = key;
          this.save();
          this.client.attach(created.channel, this.listener());
        } else {
          await this.deps.control.change(this.channelId, desired);
          this.sentKey = key;
          this.save();
        }
      }
    } catch (error) {
      if (error instanceof ApiError && error.code === "no_such_channel" && this.channelId !== null) {
        this.client.forget(this.channelId);
        this.channelId = null;
        this.sentKey = null;
        this.save();
        this.later(0);
      } else {
        this.later(RETRY_MS);
      }
    } finally {
      this.busy = false;
    }
  }
}
