/* Podium: search-as-you-type for the handle box (no dependencies).
 *
 * Typing in #search asks /api/search?prefix=...&limit=8 (debounced) and lists the
 * handles under the box; arrow keys move through them, Enter or a click opens the
 * player's page.  Without JavaScript the form submits to /search. */
(function () {
  "use strict";
  var input = document.getElementById("search");
  var list = document.getElementById("suggestions");
  if (!input || !list || !window.fetch) { return; }
  var endpoint = input.getAttribute("data-suggest") || "/api/search";
  // the pages of a ladder other than "default" live under /ladders/{ladder}
  var base = input.getAttribute("data-base") || "";
  var timer = null;
  var active = -1;
  var latest = 0;

  // as podium.service.web.player_url: a handle that would be a dot segment ("." or
  // "..", which browsers resolve away, encoded or not) goes in the query string
  var DOT_SEGMENTS = [".", "..", "%2e", ".%2e", "%2e.", "%2e%2e"];
  function playerUrl(handle) {
    var seg = encodeURIComponent(handle);
    if (DOT_SEGMENTS.indexOf(seg.toLowerCase()) >= 0) { return base + "/player?handle=" + seg; }
    return base + "/players/" + seg;
  }

  function close() {
    list.hidden = true;
    list.innerHTML = "";
    active = -1;
    input.setAttribute("aria-expanded", "false");
  }

  function highlight(k) {
    var items = list.querySelectorAll("li");
    for (var i = 0; i < items.length; i++) {
      items[i].classList.toggle("active", i === k);
      items[i].setAttribute("aria-selected", i === k ? "true" : "false");
    }
    active = k;
  }

  function show(prefix, handles) {
    list.innerHTML = "";
    if (!handles.length) {
      var none = document.createElement("li");
      none.className = "none";
      none.textContent = "no player starts with \u201c" + prefix + "\u201d";
      list.appendChild(none);
    }
    handles.forEach(function (h) {
      var li = document.createElement("li");
      li.setAttribute("role", "option");
      var a = document.createElement("a");
      a.href = playerUrl(h);
      a.className = "suggestion";
      a.textContent = h;
      li.appendChild(a);
      list.appendChild(li);
    });
    list.hidden = false;
    active = -1;
    input.setAttribute("aria-expanded", "true");
  }

  function query() {
    var prefix = input.value.trim();
    if (!prefix) { close(); return; }
    var ticket = ++latest;
    var url = endpoint + "?limit=8&prefix=" + encodeURIComponent(prefix);
    fetch(url, { headers: { "Accept": "application/json" } })
      .then(function (r) { return r.ok ? r.json() : { handles: [] }; })
      .then(function (data) {
        if (ticket === latest && input.value.trim() === prefix) { show(prefix, data.handles || []); }
      })
      .catch(function () { /* offline or server gone: keep the plain form */ });
  }

  input.addEventListener("input", function () {
    if (timer) { clearTimeout(timer); }
    timer = setTimeout(query, 120);
  });

  input.addEventListener("keydown", function (ev) {
    var links = list.querySelectorAll("a.suggestion");
    if (list.hidden || !links.length) { return; }
    if (ev.key === "ArrowDown") {
      ev.preventDefault();
      highlight((active + 1) % links.length);
    } else if (ev.key === "ArrowUp") {
      ev.preventDefault();
      highlight((active - 1 + links.length) % links.length);
    } else if (ev.key === "Enter" && active >= 0) {
      ev.preventDefault();
      window.location.href = links[active].href;
    } else if (ev.key === "Escape") {
      close();
    }
  });

  document.addEventListener("click", function (ev) {
    if (!list.contains(ev.target) && ev.target !== input) { close(); }
  });
})();

/* A <select data-autosubmit> submits its form when changed (the leaderboard's activity
 * window); no inline event handlers, so that the pages' Content-Security-Policy can
 * forbid inline script.  Without JavaScript the form has an Apply button. */
(function () {
  "use strict";
  var selects = document.querySelectorAll("select[data-autosubmit]");
  for (var i = 0; i < selects.length; i++) {
    selects[i].addEventListener("change", function (ev) {
      var form = ev.target.form;
      if (form) { form.submit(); }
    });
  }
})();
