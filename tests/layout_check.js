// Measures a page as the browser laid it out and writes what a reader would see go
// wrong into <pre id="layout-check">, as JSON: a chart's text outside its picture,
// two texts of a chart on top of each other, a legend entry outside its figure, and
// anything wider than the page. tests/reports/report.rs appends this to a copy of a page and
// reads the DOM that headless Chromium dumps.
(function () {
  const problems = [];
  const name = (el) => (el.textContent || "").trim().slice(0, 60);
  const SLACK = 1; // px: anti-aliasing, not a problem
  const charts = document.querySelectorAll("svg.chart");
  charts.forEach((svg, i) => {
    const title = svg.querySelector("title") ? name(svg.querySelector("title")) : `chart ${i + 1}`;
    const view = svg.viewBox.baseVal;
    const texts = Array.from(svg.querySelectorAll("text")).filter((t) => name(t) !== "");
    const boxes = texts.map((t) => {
      // getBBox is in the text's own coordinates; a rotated label is measured on screen.
      const r = t.getBoundingClientRect();
      const s = svg.getBoundingClientRect();
      const scale = view.width / s.width;
      return {
        text: name(t),
        left: (r.left - s.left) * scale,
        right: (r.right - s.left) * scale,
        top: (r.top - s.top) * scale,
        bottom: (r.bottom - s.top) * scale,
      };
    });
    boxes.forEach((b) => {
      if (b.left < -SLACK || b.top < -SLACK || b.right > view.width + SLACK || b.bottom > view.height + SLACK) {
        problems.push(`"${title}": text "${b.text}" runs outside the chart (${b.left.toFixed(0)}..${b.right.toFixed(0)} × ${b.top.toFixed(0)}..${b.bottom.toFixed(0)} in ${view.width} × ${view.height})`);
      }
    });
    for (let a = 0; a < boxes.length; a++) {
      for (let b = a + 1; b < boxes.length; b++) {
        const p = boxes[a], q = boxes[b];
        const w = Math.min(p.right, q.right) - Math.max(p.left, q.left);
        const h = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
        if (w > 2 && h > 2) {
          problems.push(`"${title}": text "${p.text}" overlaps "${q.text}"`);
        }
      }
    }
  });
  document.querySelectorAll("figure.chart").forEach((figure) => {
    const edge = figure.getBoundingClientRect();
    figure.querySelectorAll("figcaption > *").forEach((key) => {
      const r = key.getBoundingClientRect();
      if (r.right > edge.right + SLACK || r.left < edge.left - SLACK) {
        problems.push(`legend entry "${name(key)}" runs outside its figure`);
      }
    });
  });
  const page = document.body.getBoundingClientRect();
  const seen = new Set();
  // Inside an element that scrolls sideways, content may be wider: the reader scrolls.
  const scrolled = (el) => {
    for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) {
      const x = getComputedStyle(up).overflowX;
      if (x === "auto" || x === "scroll") return true;
    }
    return false;
  };
  document.querySelectorAll("body *").forEach((el) => {
    if (el.closest("svg") && el.tagName.toLowerCase() !== "svg") return;
    if (el.closest("details:not([open])")) return;
    if (scrolled(el)) return;
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > page.right + SLACK) {
      const what = `${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}`;
      // An element inside one already named is the same problem.
      if (!Array.from(seen).some((outer) => outer.contains(el))) {
        seen.add(el);
        problems.push(`${what} "${name(el)}" is wider than the page (right edge ${r.right.toFixed(0)} > ${page.right.toFixed(0)})`);
      }
    }
  });
  // What a reader must scroll sideways to see: fine on a narrow window, not on a wide one.
  const scrolls = [];
  document.querySelectorAll("body *").forEach((el) => {
    const x = getComputedStyle(el).overflowX;
    if ((x === "auto" || x === "scroll") && el.scrollWidth > el.clientWidth + SLACK) {
      scrolls.push(`${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""} (${el.scrollWidth} px in ${el.clientWidth})`);
    }
  });
  const out = document.createElement("pre");
  out.id = "layout-check";
  out.textContent = JSON.stringify({ charts: charts.length, problems, scrolls });
  document.body.appendChild(out);
})();
