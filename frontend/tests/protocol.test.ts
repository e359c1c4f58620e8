import { describe, expect, it } from "vitest";
import { MarketBook, type MarketState, OddsClient, type Socket } from "../src/protocol";

function market(id: number, seq: number, price = "2.00"): MarketState {
  return { type: "market", market_id: id, seq, status: "open", tradable: true, selections: [{ id: 1, price, status: "active" }] };
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
});

class FakeSocket implements Socket {
  readyState = 1;
  sent: string[] = [];
  onopen: ((ev: unknown) => void) | null = null;
  onclose: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  send(data: string): void {
    this.sent.push(data);
  }
  close(): void {
    this.onclose?.({});
  }
}

describe("OddsClient", () => {
  it("watches its markets on open, applies the image, then only newer deltas", () => {
    const sockets: FakeSocket[] = [];
    const seen: number[] = [];
    const client = new OddsClient({
      url: "ws://test",
      markets: [1, 2],
      connect: () => {
        const s = new FakeSocket();
        sockets.push(s);
        return s;
      },
      onMarket: (state) => seen.push(state.seq),
      onStatus: () => undefined,
      schedule: (fn) => fn(),
    });
    client.start();
    const socket = sockets[0]!;
    socket.onopen?.({});
    expect(JSON.parse(socket.sent[0]!)).toEqual({ type: "watch", markets: [1, 2] });
    socket.onmessage?.({ data: JSON.stringify({ type: "image", v: 1, markets: [market(1, 3)] }) });
    socket.onmessage?.({ data: JSON.stringify(market(1, 2)) });
    socket.onmessage?.({ data: JSON.stringify(market(1, 4)) });
    expect(seen).toEqual([3, 4]);
  });

  it("reconnects after the socket closes and watches again", () => {
    const sockets: FakeSocket[] = [];
    const client = new OddsClient({
      url: "ws://test",
      markets: [7],
      connect: () => {
        const s = new FakeSocket();
        sockets.push(s);
        return s;
      },
      onMarket: () => undefined,
      onStatus: () => undefined,
      schedule: (fn) => fn(),
    });
    client.start();
    sockets[0]!.onclose?.({});
    expect(sockets).toHaveLength(2);
    sockets[1]!.onopen?.({});
    expect(JSON.parse(sockets[1]!.sent[0]!)).toEqual({ type: "watch", markets: [7] });
  });
});
