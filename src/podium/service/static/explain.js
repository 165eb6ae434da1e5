/* Podium: the "why?" panel of the contest page (no dependencies, no inline script).
 *
 * Each standings row has a button.explain-btn (data-contest, data-handle); a click asks
 * /api/explain?contest=...&handle=...&top=5 and shows #explain-panel: the rating before,
 * the change and after, the performance, and each equation of the update with its sum,
 * tolerance and the terms pushing most up and down (docs/explain.md).  A page opened
 * with ?explain=HANDLE (the player page's "why?" links) opens the panel at once. */
(function () {
  "use strict";
  var panel = document.getElementById("explain-panel");
  if (!panel || !window.fetch) { return; }
  var latest = 0;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = text; }
    return e;
  }
  function fmt(x, d) {
    if (x === null || x === undefined) { return "–"; }
    return Number(x).toFixed(d === undefined ? 2 : d);
  }
  function signed(x, d) {
    if (x === null || x === undefined) { return "–"; }
    return (x >= 0 ? "+" : "−") + Math.abs(x).toFixed(d === undefined ? 2 : d);
  }
  function termList(title, terms, cls) {
    var box = el("div", "explain-terms " + cls);
    box.appendChild(el("h4", null, title));
    var ul = el("ul");
    terms.forEach(function (t) {
      var li = el("li", "explain-term");
      li.appendChild(el("span", "term-value", signed(t.value, 6)));
      li.appendChild(document.createTextNode(" "));
      li.appendChild(el("span", "term-source", t.source));
      li.appendChild(el("span", "term-kind muted", " (" + t.kind + ")"));
      ul.appendChild(li);
    });
    box.appendChild(ul);
    return box;
  }
  function render(d) {
    panel.innerHTML = "";
    var head = el("h3", "explain-title", "Why " + d.player + "'s rating changed");
    var close = el("button", "explain-close", "×");
    close.type = "button";
    close.setAttribute("aria-label", "close");
    close.addEventListener("click", function () { panel.hidden = true; });
    head.appendChild(close);
    panel.appendChild(head);
    var sum = el("p", "explain-sum");
    sum.appendChild(el("span", "explain-before", fmt(d.display_before)));
    sum.appendChild(document.createTextNode(" "));
    sum.appendChild(el("span", "explain-change " + (d.change >= 0 ? "pos" : "neg"),
                       signed(d.change)));
    sum.appendChild(document.createTextNode(" = "));
    sum.appendChild(el("span", "explain-after", fmt(d.display_after)));
    sum.appendChild(el("span", "muted", "  (mu " + fmt(d.mu_before) + " → " + fmt(d.mu_after) +
                       ", sigma " + fmt(d.sigma_before) + " → " + fmt(d.sigma_after) + ")"));
    panel.appendChild(sum);
    if (d.performance !== null) {
      var perf = el("p", "explain-perf");
      perf.appendChild(document.createTextNode("Performance "));
      perf.appendChild(el("span", "explain-performance", fmt(d.performance)));
      panel.appendChild(perf);
    }
    d.equations.forEach(function (eq) {
      var sec = el("section", "explain-equation");
      sec.setAttribute("data-equation", eq.name);
      sec.appendChild(el("h4", null, eq.name + ": " + eq.formula));
      sec.appendChild(el("p", "muted", eq.reference + " · " + eq.count + " terms sum to " +
                         Number(eq.total).toPrecision(8) + " (target " +
                         Number(eq.target).toPrecision(8) + ", tolerance " +
                         Number(eq.tolerance).toPrecision(3) + ": " +
                         (eq.holds ? "holds" : "does not hold") + ")"));
      var own = d.terms.filter(function (t) { return t.equation === eq.name; });
      var up = own.filter(function (t) { return t.value > 0; })
        .sort(function (a, b) { return b.value - a.value; });
      var down = own.filter(function (t) { return t.value < 0; })
        .sort(function (a, b) { return a.value - b.value; });
      sec.appendChild(termList("pushing up", up, "up"));
      sec.appendChild(termList("pushing down", down, "down"));
      panel.appendChild(sec);
    });
    if (d.notes.length) {
      var notes = el("ul", "explain-notes");
      d.notes.forEach(function (n) { notes.appendChild(el("li", null, n)); });
      panel.appendChild(notes);
    }
  }
  function open(contest, handle) {
    var ticket = ++latest;
    panel.hidden = false;
    panel.innerHTML = "";
    panel.appendChild(el("p", "muted", "Explaining " + handle + "…"));
    var url = (panel.getAttribute("data-api") || "/api") + "/explain?contest=" + encodeURIComponent(contest) + "&handle=" +
      encodeURIComponent(handle) + "&top=5";
    fetch(url, {headers: {"Accept": "application/json"}})
      .then(function (r) {
        return r.json().then(function (body) { return {ok: r.ok, body: body}; });
      })
      .then(function (res) {
        if (ticket !== latest) { return; }
        if (!res.ok) {
          panel.innerHTML = "";
          panel.appendChild(el("p", "explain-error", res.body.detail || "no explanation"));
          return;
        }
        render(res.body);
        panel.scrollIntoView({block: "nearest"});
      })
      .catch(function () {
        if (ticket === latest) { panel.textContent = "The explanation could not be loaded."; }
      });
  }
  document.addEventListener("click", function (ev) {
    var b = ev.target.closest ? ev.target.closest("button.explain-btn") : null;
    if (!b) { return; }
    open(b.getAttribute("data-contest"), b.getAttribute("data-handle"));
  });
  var wanted = new URLSearchParams(window.location.search).get("explain");
  if (wanted) { open(panel.getAttribute("data-contest"), wanted); }
})();
