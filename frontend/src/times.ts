// Times in the punter's own time zone: the page carries ISO timestamps (``<time datetime>``) and
// the browser writes them out in its zone and language.

/** "Sun 22 Nov" and "19:45" (short) or "Sunday 22 November, 19:45" (long) in ``timeZone``. */
export function localTimeParts(iso: string, timeZone?: string): { day: string; time: string; long: string } | null {
  const when = new Date(iso);
  if (Number.isNaN(when.getTime())) return null;
  const options = { timeZone } as const;
  const day = when.toLocaleDateString("en-GB", { ...options, weekday: "short", day: "numeric", month: "short" });
  const time = when.toLocaleTimeString("en-GB", { ...options, hour: "2-digit", minute: "2-digit" });
  const long = `${when.toLocaleDateString("en-GB", { ...options, weekday: "long", day: "numeric", month: "long" })}, ${time}`;
  return { day: day.replace(",", ""), time, long: long.replace(/^(\w+),/, "$1") };
}

/** Rewrite every ``time[data-local]`` of the page in the browser's time zone. */
export function localTimes(root: ParentNode = document): void {
  for (const node of root.querySelectorAll<HTMLTimeElement>("time[data-local]")) {
    const parts = localTimeParts(node.dateTime);
    if (parts === null) continue;
    if (node.dataset.local === "long") {
      node.textContent = parts.long;
    } else {
      const day = node.querySelector(".day");
      const time = node.querySelector(".num");
      if (day !== null) day.textContent = parts.day;
      if (time !== null) time.textContent = parts.time;
    }
    node.dataset.localised = "";
  }
}
