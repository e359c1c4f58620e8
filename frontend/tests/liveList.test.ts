import { describe, expect, it } from "vitest";
import { focusSelector, listDiffers, listUrl } from "../src/liveList";
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

function element(tagName: string, attributes: Record<string, string>) {
  return { tagName, getAttribute: (name: string) => attributes[name] ?? null };
}

describe("the focus kept across a list drawn anew", () => {
  it("finds a price again by its selection", () => {
    expect(focusSelector(element("BUTTON", { "data-selection": "42", "data-market": "7" }))).toBe('[data-selection="42"]');
  });

  it("finds a link again by where it goes", () => {
    expect(focusSelector(element("A", { href: "/event/12/" }))).toBe('a[href="/event/12/"]');
  });

  it("leaves anything it cannot name safely to the browser", () => {
    expect(focusSelector(element("BUTTON", {}))).toBeNull();
    expect(focusSelector(element("BUTTON", { "data-selection": '1"] , *[x="' }))).toBeNull();
    expect(focusSelector(element("A", { href: 'https://elsewhere.example/"]' }))).toBeNull();
  });
});
