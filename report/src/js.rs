//! The JavaScript of the page: plotly.js from the `plotly` crate, and our client script.
//!
//! The `plotly` crate (MIT) vendors `plotly.min.js` and exposes it, together with MathJax,
//! as `Plot::offline_js_sources()` (`<script>` elements). The report needs plotly.js only,
//! so the first script element's body is taken out of that text; a test checks it is
//! plotly.js.

use std::sync::OnceLock;

use crate::ReportError;

/// The plotly.js source embedded in every report.
pub fn plotly_js() -> Result<&'static str, ReportError> {
    static JS: OnceLock<Option<String>> = OnceLock::new();
    JS.get_or_init(|| {
        let all = plotly::Plot::offline_js_sources();
        let start = all.find("<script")?;
        let body_start = start + all[start..].find('>')? + 1;
        let end = body_start + all[body_start..].find("</script>")?;
        let js = &all[body_start..end];
        js.contains("plotly.js").then(|| js.to_string())
    })
    .as_deref()
    .ok_or(ReportError::NoPlotlyJs)
}

/// Draws every figure of the `dl-data` block, opens inner diagrams on anchor links and
/// filters the event table. Sets `window.drivelinkReport = {figures, drawn}` for tests.
pub const CLIENT: &str = r##"
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("dl-data").textContent);
  var state = { figures: data.figures.length, drawn: 0, errors: [] };
  window.drivelinkReport = state;
  var config = { responsive: true, displaylogo: false, scrollZoom: true,
                 modeBarButtonsToRemove: ["select2d", "lasso2d"] };
  data.figures.forEach(function (f) {
    var el = document.getElementById(f.id);
    if (!el) { return; }
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
    #[test]
    fn plotly_js_is_extracted_whole() {
        let js = super::plotly_js().unwrap();
        assert!(
            js.trim_start().starts_with("/**"),
            "starts with the licence banner"
        );
        assert!(js.contains("plotly.js v"));
        assert!(js.len() > 1_000_000, "the full bundle ({} bytes)", js.len());
        assert!(!js.contains("</script"), "cannot close its script element");
        let all = plotly::Plot::offline_js_sources();
        assert!(js.len() + 1_000_000 < all.len(), "MathJax left out");
    }
}
