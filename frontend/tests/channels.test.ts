import { describe, expect, it } from "vitest";
import { ApiError, type StreamSpec } from "../src/api";
import { type ChannelDeps, type ChannelHost, ManagedChannel } from "../src/channels";
import type { ChannelListener } from "../src/protocol";

class MemoryStorage {
  private readonly items = new Map<string, string>();
  get length(): number {
    return this.items.size;
  }
  clear(): void {
    this.items.clear();
  }
  getItem(key: string): string | null {
    return this.items.get(key) ?? null;
  }
  key(): string | null {
    return null;
  }
  removeItem(key: string): void {
    this.items.delete(key);
  }
  setItem(key: string, value: string): void {
    this.items.set(key, value);
  }
}

class Host implements ChannelHost {
  attached: [string, boolean][] = [];
  forgotten: string[] = [];
  listeners = new Map<string, ChannelListener>();
  attach(channelId: string, listener: ChannelListener, options?: { begun?: boolean }): void {
    this.attached.push([channelId, options?.begun ?? false]);
    this.listeners.set(channelId, listener);
  }
  forget(channelId: string): void {
    this.forgotten.push(channelId);
  }
}

function slip(...selections: number[]): StreamSpec {
  return { view: "slip", slip: selections.map((s) => ({ selection_id: s, market_id: s * 10 })), stake: null };
}

function setup(store = new MemoryStorage()) {
  const calls: string[] = [];
  let next = 0;
  let failChange = false;
  const deps: ChannelDeps = {
    control: {
      subscribe: async (spec) => {
        calls.push(`subscribe ${JSON.stringify(spec.view === "slip" ? spec.slip.map((l) => l.selection_id) : [])}`);
        return { v: 1, channel: `channel-${++next}` };
      },
      change: async (id, spec) => {
        if (failChange) throw new ApiError(404, "no_such_channel", "no such channel");
        calls.push(`change ${id} ${JSON.stringify(spec.view === "slip" ? spec.slip.map((l) => l.selection_id) : [])}`);
        return {};
      },
      unsubscribe: async (id) => {
        calls.push(`unsubscribe ${id}`);
        return {};
      },
    },
    store: store as unknown as Storage,
    setTimer: () => 0,
    clearTimer: () => undefined,
  };
  const host = new Host();
  const channel = new ManagedChannel(host, "slip", () => undefined, deps);
  return { calls, host, channel, store, failChanges: () => (failChange = true) };
}

describe("a managed channel follows the spec the page wants", () => {
  it("subscribes once, changes with PUT, and ends with DELETE", async () => {
    const { calls, host, channel, store } = setup();
    channel.set(slip(1));
    await channel.sync();
    expect(calls).toEqual(["subscribe [1]"]);
    expect(host.attached).toEqual([["channel-1", false]]);
    channel.set(slip(1));
    await channel.sync();
    channel.set(slip(1, 2));
    await channel.sync();
    expect(calls).toEqual(["subscribe [1]", "change channel-1 [1,2]"]);
    expect(JSON.parse(store.getItem("slip")!)).toMatchObject({ id: "channel-1" });
    channel.set(null);
    await channel.sync();
    expect(calls[calls.length - 1]).toBe("unsubscribe channel-1");
    expect(host.forgotten).toEqual(["channel-1"]);
    expect(store.getItem("slip")).toBeNull();
  });

  it("reuses the channel of the previous page and changes it only when the spec differs", async () => {
    const first = setup();
    first.channel.set(slip(1));
    await first.channel.sync();
    const next = setup(first.store);
    expect(next.host.attached).toEqual([["channel-1", true]]);
    next.channel.set(slip(1));
    await next.channel.sync();
    expect(next.calls).toEqual([]);
    next.channel.set(slip(1, 3));
    await next.channel.sync();
    expect(next.calls).toEqual(["change channel-1 [1,3]"]);
  });

  it("subscribes again when the server no longer knows the channel", async () => {
    const { calls, host, channel, failChanges } = setup();
    channel.set(slip(1));
    await channel.sync();
    host.listeners.get("channel-1")?.onLost?.("not_your_channel");
    await channel.sync();
    expect(calls).toEqual(["subscribe [1]", "subscribe [1]"]);
    expect(host.attached[host.attached.length - 1]).toEqual(["channel-2", false]);
    failChanges();
    channel.set(slip(4));
    await channel.sync();
    await channel.sync();
    expect(calls[calls.length - 1]).toBe("subscribe [4]");
    expect(host.forgotten).toContain("channel-2");
  });
});

describe("the markets a channel names", () => {
  it("are those of the spec it wants now, for the begin's since", async () => {
    const { host, channel } = setup();
    channel.set(slip(1, 2));
    await channel.sync();
    const listener = host.listeners.get("channel-1")!;
    expect(listener.markets?.()).toEqual([10, 20]);
    channel.set({
      view: "bets",
      bets: [{ bet_id: 4, stake: "5.00", legs: [{ selection_id: 3, market_id: 30, price: "2.00" }, { selection_id: 4, market_id: 30, price: "1.50" }] }],
    });
    expect(listener.markets?.()).toEqual([30]);
    channel.set(null);
    expect(listener.markets?.()).toEqual([]);
  });
});
