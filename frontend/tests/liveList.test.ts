import { describe, expect, it } from "vitest";
import { listDiffers, listUrl } from "../src/liveList";
import { queryKey } from "../src/protocol";

describe("a list following its query", () => {
  it("is fetched again when its query holds a market it lacks or no longer holds one it shows", () => {
    expect(listDiffers([1, 2], [1, 2], true)).toBe(false);
    expect(listDiffers([1, 2], [1, 2, 3], true)).toBe(true); // a market joined
    expect(listDiffers([1, 2, 3], [1, 2], true)).toBe(true); // a market left
    expect(listDiffers([], [], true)).toBe(false);
  });

  it("cut at its first events, lacks the others by design but not one it shows", () => {
    expect(listDiffers([1, 2], [1, 2, 3], false)).toBe(false);
    expect(listDiffers([1, 2], [2, 3], false)).toBe(true);
  });

  it("asks for the list at the channel's sequence, so a cache cannot answer with an older one", () => {
    expect(listUrl({ pathname: "/in-play/" }, 12)).toBe("/in-play/?fragment=listing&v=12");
  });

  it("knows a query whatever the order or absence of its conditions", () => {
    expect(queryKey({ in_play: true, headline: true })).toBe(queryKey({ headline: true, sport: null, in_play: true }));
    expect(queryKey({ in_play: true })).not.toBe(queryKey({ in_play: false }));
  });
});
