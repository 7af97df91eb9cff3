//! The JavaScript of the page: the vendored partial plotly.js bundle, and our client script.
//!
//! `assets/plotly-partial.min.js` is plotly.js (MIT) with only the trace types the report
//! draws (scatter, sankey), built once with npm and esbuild and committed; `assets/README.md`
//! says how to rebuild it. Building the crate needs neither npm nor the network.

/// The plotly.js source embedded in every report.
pub const PLOTLY_JS: &str = include_str!("../assets/plotly-partial.min.js");

/// Draws every figure of the `dl-data` block (its long arrays restored from the block's
/// `pool`, see [`crate::pool`]), opens inner diagrams on anchor links and
/// filters the event table. Sets `window.drivelinkReport = {figures, drawn}` for tests.
pub const CLIENT: &str = r##"
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("dl-data").textContent);
  var state = { figures: data.figures.length, drawn: 0, errors: [] };
  window.drivelinkReport = state;
  var config = { responsive: true, displaylogo: false, scrollZoom: true,
                 modeBarButtonsToRemove: ["select2d", "lasso2d"] };
  // A pool entry {"f32": base64} is an array of little-endian f32 samples, NaN for a gap;
  // each was a number of 6 significant digits, which toPrecision(6) gives back exactly.
  function unpack(v) {
    if (Array.isArray(v) || typeof v.f32 !== "string") { return v; }
    var bin = atob(v.f32), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) { bytes[i] = bin.charCodeAt(i); }
    var f = new Float32Array(bytes.buffer), out = new Array(f.length);
    for (var j = 0; j < f.length; j++) { out[j] = f[j] === f[j] ? +f[j].toPrecision(6) : null; }
    return out;
  }
  var pool = (data.pool || []).map(unpack);
  function unpool(trace) {
    ["x", "y", "text"].forEach(function (k) {
      var v = trace[k];
      if (v && !Array.isArray(v) && typeof v.pool === "number") { trace[k] = pool[v.pool]; }
    });
  }
  data.figures.forEach(function (f) {
    var el = document.getElementById(f.id);
    if (!el) { return; }
    f.figure.data.forEach(unpool);
    Plotly.newPlot(el, f.figure.data, f.figure.layout, config).then(function () {
      state.drawn += 1;
    }, function (e) {
      state.errors.push(f.id + ": " + e);
      el.textContent = "chart could not be drawn: " + e;
      el.className = "error";
    });
  });
  function openHash() {
    var id = decodeURIComponent(window.location.hash.slice(1));
    var el = id ? document.getElementById(id) : null;
    if (el && el.tagName === "DETAILS") { el.open = true; el.scrollIntoView(); }
  }
  window.addEventListener("hashchange", openHash);
  openHash();
  var buttons = document.querySelectorAll("button.fit-toggle");
  for (var b = 0; b < buttons.length; b++) {
    buttons[b].addEventListener("click", function () {
      var boxes = document.querySelectorAll("#diagram .diagram");
      for (var i = 0; i < boxes.length; i++) { boxes[i].classList.toggle("fit"); }
    });
  }
  // Hide or show the event markers (legend group "events") and the event lines and bands
  // (the layout shapes) of every scope chart.
  var eventsShown = true;
  var toggle = document.querySelector("button.event-toggle");
  if (toggle) {
    toggle.addEventListener("click", function () {
      eventsShown = !eventsShown;
      var charts = document.querySelectorAll("div.chart[data-scope]");
      for (var i = 0; i < charts.length; i++) {
        var el = charts[i];
        if (!el.data) { continue; }
        if (el.dlShapes === undefined) { el.dlShapes = (el.layout.shapes || []).slice(); }
        var idx = [];
        el.data.forEach(function (t, k) { if (t.legendgroup === "events") { idx.push(k); } });
        if (idx.length) { Plotly.restyle(el, { visible: eventsShown ? true : "legendonly" }, idx); }
        Plotly.relayout(el, { shapes: eventsShown ? el.dlShapes : [] });
      }
      toggle.setAttribute("aria-pressed", eventsShown ? "true" : "false");
      toggle.textContent = eventsShown ? "hide events on the charts" : "show events on the charts";
    });
  }
  var filter = document.getElementById("event-filter");
  if (filter) {
    filter.addEventListener("input", function () {
      var q = filter.value.toLowerCase();
      var rows = document.querySelectorAll("#event-table tbody tr");
      for (var i = 0; i < rows.length; i++) {
        rows[i].style.display = rows[i].textContent.toLowerCase().indexOf(q) >= 0 ? "" : "none";
      }
    });
  }
})();
"##;

#[cfg(test)]
mod tests {
    use super::PLOTLY_JS;

    #[test]
    fn plotly_bundle_is_the_partial_one_with_its_licence() {
        let banner_end = PLOTLY_JS.find("*/").unwrap();
        let banner = &PLOTLY_JS[..banner_end];
        assert!(banner.starts_with("/**"), "starts with the licence banner");
        assert!(banner.contains("plotly.js (drivelink partial bundle: scatter, sankey"));
        assert!(banner.contains("Licensed under the MIT license"));
        // The trace types the report draws are registered; the big ones are not there.
        let registered =
            |t: &str| PLOTLY_JS.contains(&format!("moduleType:\"trace\",name:\"{t}\""));
        assert!(registered("scatter") && registered("sankey"));
        for t in ["bar", "scattergl", "scatter3d", "choropleth", "pie"] {
            assert!(!registered(t), "{t} left out");
        }
        assert!(PLOTLY_JS.len() < 1_500_000, "{} bytes", PLOTLY_JS.len());
        assert!(
            !PLOTLY_JS.contains("</script"),
            "cannot close its script element"
        );
    }
}
