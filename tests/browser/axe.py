"""Accessibility checks in the browser tests: axe-core's WCAG 2 A and AA rules (colour contrast
among them) run on the page as it stands, and a test fails with the list of what they found."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from playwright.sync_api import Error, Page

AXE = Path(__file__).resolve().parents[2] / "frontend" / "node_modules" / "axe-core" / "axe.min.js"
TAGS = ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa")
# Landmark rules are tagged best practice by axe; the pages keep to them as well.
BEST_PRACTICE = ("landmark-one-main", "landmark-unique", "region", "page-has-heading-one")

RUN = """
async ({ tags, rules }) => {
  const results = await axe.run(document, {
    runOnly: { type: "tag", values: tags },
    rules: Object.fromEntries(rules.map((id) => [id, { enabled: true }])),
    resultTypes: ["violations"],
  });
  return results.violations
    .map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target.map(String), summary: n.failureSummary })),
    }));
}
"""


@cache
def _axe_source() -> str:
    if not AXE.exists():
        raise RuntimeError(f"{AXE} is missing: run `npm install` in frontend/ (axe-core is a dev dependency)")
    return AXE.read_text()


def axe_violations(page: Page) -> list[dict[str, Any]]:
    """The page's WCAG 2 A/AA violations found by axe-core (no rule is switched off)."""
    if not page.evaluate("typeof window.axe === 'object'"):
        # Evaluated through the debugging protocol, so the page's Content-Security-Policy (which
        # refuses inline scripts) does not apply, as it would to an injected <script> tag.
        page.evaluate(_axe_source())
    arguments = {"tags": list(TAGS), "rules": list(BEST_PRACTICE)}
    try:
        return page.evaluate(RUN, arguments)
    except Error:
        # The live pages replace their tables every few seconds; a node axe was looking at may
        # have left the document. The next run sees the new one.
        return page.evaluate(RUN, arguments)


def describe(violations: list[dict[str, Any]]) -> str:
    lines = []
    for v in violations:
        lines.append(f"{v['id']} ({v['impact']}): {v['help']}")
        for node in v["nodes"]:
            detail = " ".join(node["summary"].split())
            lines.append(f"    {' '.join(node['target'])}  — {detail}")
    return "\n".join(lines)


def axe_check(page: Page) -> None:
    """Fail when axe-core finds a WCAG 2 A/AA violation on the page (see ``axe_violations``)."""
    violations = axe_violations(page)
    assert not violations, f"accessibility violations on {page.url}:\n{describe(violations)}"
