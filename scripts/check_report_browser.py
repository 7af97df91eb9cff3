"""Opens a drivelink report.html in headless Chromium and checks it works offline.

Usage: check_report_browser.py REPORT.html SCREENSHOT_DIR CHROMIUM [EXPECTED_SCOPES]

Fails (exit 1) on any console error or page error, on any request that leaves the file
(the report must be self-contained), when the page's plotly.js is not the vendored partial
bundle (plotly with the scatter and sankey traces only), when a chart did not render (plotly's SVG missing),
when hovering a chart shows no value with its unit, when a legend click does not hide its
signal, when the event markers or the block diagram are missing. Writes report.png (the
whole page) and report_top.png / report_scope.png (parts) into SCREENSHOT_DIR.
"""

import pathlib
import sys
import tempfile

from playwright.sync_api import sync_playwright

ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def main() -> int:
    report = pathlib.Path(sys.argv[1]).resolve()
    shots = pathlib.Path(sys.argv[2]).resolve()
    chromium = sys.argv[3]
    expected_scopes = int(sys.argv[4]) if len(sys.argv) > 4 else None
    shots.mkdir(parents=True, exist_ok=True)
    failures: list[str] = []
    passed = 0

    def check(ok: bool, what: str) -> None:
        nonlocal passed
        if ok:
            passed += 1
            print(f"ok: {what}")
        else:
            failures.append(what)
            print(f"FAILED: {what}")

    console_errors: list[str] = []
    outside: list[str] = []
    with sync_playwright() as p, tempfile.TemporaryDirectory() as profile:
        ctx = p.chromium.launch_persistent_context(
            profile,
            executable_path=chromium,
            headless=True,
            args=ARGS,
            viewport={"width": 1400, "height": 1000},
        )
        page = ctx.new_page()
        page.on(
            "console",
            lambda m: console_errors.append(m.text) if m.type == "error" else None,
        )
        page.on("pageerror", lambda e: console_errors.append(f"page error: {e}"))

        def on_request(req):
            if not req.url.startswith(("file:", "data:", "blob:", "about:")):
                outside.append(req.url)

        page.on("request", on_request)
        page.goto(report.as_uri(), wait_until="load", timeout=120_000)
        page.wait_for_function(
            "window.drivelinkReport && "
            "window.drivelinkReport.drawn + window.drivelinkReport.errors.length"
            " === window.drivelinkReport.figures",
            timeout=120_000,
        )
        state = page.evaluate("window.drivelinkReport")
        check(state["errors"] == [], f"every figure drawn without error ({state})")
        figures = state["figures"]
        check(state["drawn"] == figures and figures > 0, f"{state['drawn']}/{figures} figures drawn")

        # The charts are drawn by the embedded partial bundle: plotly with scatter and sankey only.
        bundle = page.evaluate(
            "({version: Plotly.version, traces: Object.keys(Plotly.PlotSchema.get().traces).sort(),"
            " banner: document.head.querySelector('script').textContent.slice(0, 200)})"
        )
        check(
            "drivelink partial bundle" in bundle["banner"] and bundle["traces"] == ["sankey", "scatter"],
            f"plotly.js {bundle['version']} partial bundle with traces {bundle['traces']}",
        )

        # Every chart div holds plotly's SVG with drawn traces.
        n_plots = page.locator(".js-plotly-plot").count()
        check(n_plots == figures, f"{n_plots} plotly charts in the DOM")
        n_svg = page.locator(".js-plotly-plot svg.main-svg").count()
        check(n_svg >= figures, f"{n_svg} plotly SVG layers")
        n_scopes = page.locator("div.chart[data-scope]").count()
        if expected_scopes is not None:
            check(n_scopes == expected_scopes, f"{n_scopes} scope charts (expected {expected_scopes})")
        for i in range(n_scopes):
            traces = page.locator(f"#scope-{i} .scatterlayer .trace").count()
            check(traces > 0, f"scope-{i}: {traces} traces drawn")
        check(page.locator("#energy-chart .sankey").count() == 1, "energy Sankey drawn")
        check(page.locator(".error").count() == 0, "no error boxes in the page")

        # Event markers carry block and kind.
        ev = page.evaluate(
            "document.getElementById('scope-0').data"
            ".filter(t => t.legendgroup === 'events').map(t => t.text).flat()"
        )
        check(any("<b>lock</b>" in t for t in ev), f"event markers with block and kind ({len(ev)})")

        # Markers at the plot edges (t = 0, the end) are drawn whole: not clipped to the plot.
        edge = page.evaluate(
            """(() => {
                const pts = [...document.querySelectorAll('#scope-0 .scatterlayer .trace')]
                    .filter(g => g.__data__ && g.__data__[0] && g.__data__[0].trace
                                 && g.__data__[0].trace.legendgroup === 'events')
                    .flatMap(g => [...g.querySelectorAll('path.point')]);
                const boxes = pts.map(p => p.getBoundingClientRect());
                const left = Math.min(...boxes.map(b => b.left));
                const first = boxes.find(b => b.left === left);
                return {n: pts.length, clipped: pts.filter(p => p.closest('[clip-path]')).length,
                        width: first ? first.width : 0, height: first ? first.height : 0};
            })()"""
        )
        check(
            edge["n"] > 0 and edge["clipped"] == 0 and abs(edge["width"] - edge["height"]) < 1,
            f"event markers unclipped, the leftmost one whole ({edge})",
        )

        # The event toggle hides and shows the markers, lines and bands of every chart.
        def events_state():
            return page.evaluate(
                "[...document.querySelectorAll('div.chart[data-scope]')].map(el => ["
                "(el.layout.shapes || []).length,"
                " el.data.filter(t => t.legendgroup === 'events' && t.visible !== 'legendonly').length])"
            )

        before = events_state()
        page.locator("button.event-toggle").click()
        page.wait_for_timeout(300)
        hidden = events_state()
        page.locator("button.event-toggle").click()
        page.wait_for_timeout(300)
        check(
            any(s > 0 and m > 0 for s, m in before)
            and all(s == 0 and m == 0 for s, m in hidden)
            and events_state() == before,
            f"event toggle hides and restores events ({before} -> {hidden})",
        )

        # Element ids are unique in the drawn page (the diagram levels, plotly's own).
        dups = page.evaluate(
            "(() => { const seen = new Set(), d = [];"
            " for (const e of document.querySelectorAll('[id]')) {"
            "   if (seen.has(e.id)) d.push(e.id); seen.add(e.id); }"
            " return d; })()"
        )
        check(dups == [], f"no duplicate element ids ({dups[:5]})")

        # The block diagram with its boxes and the inner diagram of the gearbox.
        blocks = page.locator("#diagram-top rect.block").count()
        check(blocks > 0, f"block diagram with {blocks} boxes")
        check(page.locator("details[id^=diagram-]").count() > 0, "inner diagrams present")

        # Hover over the first scope: a unified hover label with the value and its unit.
        page.locator("#scope-0").scroll_into_view_if_needed()
        # The tallest drag area is the signal panel (the event strip is short).
        drags = page.locator("#scope-0 .nsewdrag")
        box = max(
            (drags.nth(i).bounding_box() for i in range(drags.count())),
            key=lambda b: b["height"],
        )
        page.mouse.move(box["x"] + box["width"] * 0.4, box["y"] + box["height"] * 0.5)
        page.wait_for_timeout(500)
        hover = page.evaluate("(document.querySelector('#scope-0 .hoverlayer') || {}).textContent || ''")
        unit = page.evaluate(
            "document.getElementById('scope-0').data.filter(t => t.legendgroup !== 'events')[0]"
            ".hovertemplate.split('<extra>')[0].split('}')[1].trim()"
        )
        check(bool(unit) and unit in hover, f"hover shows a value with its unit {unit!r}: {hover!r}")
        page.screenshot(path=str(shots / "report_scope.png"))

        # A legend click hides the signal.
        name = page.evaluate(
            "document.getElementById('scope-0').data.filter(t => t.legendgroup !== 'events')[0].name"
        )
        page.locator("#scope-0 .legend .traces").filter(has_text=name).first.click()
        page.wait_for_timeout(300)
        vis = page.evaluate(
            "document.getElementById('scope-0').data.filter(t => t.legendgroup !== 'events')[0].visible"
        )
        check(vis == "legendonly", f"legend click hides '{name}' (visible = {vis})")
        page.locator("#scope-0 .legend .traces").filter(has_text=name).first.click()

        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=str(shots / "report_top.png"))
        page.screenshot(path=str(shots / "report.png"), full_page=True)
        ctx.close()

    check(console_errors == [], f"no console errors ({console_errors[:5]})")
    check(outside == [], f"no request leaves the file ({outside[:5]})")
    print(f"browser test: {passed} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
