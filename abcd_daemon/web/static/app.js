// abcd view: load the parts of a long session as they come near the bottom of the
// viewport, resolve a #t-<thread>-<turn> link to the part that holds it, and keep a
// followed link's target in place while parts above it arrive. Fetches only from
// this server.
(function () {
  "use strict";
  var parts = Array.prototype.slice.call(document.querySelectorAll(".part[data-src]"));
  if (!parts.length) { return; }
  function load(p) {
    if (p.dataset.state) { return Promise.resolve(); }
    p.dataset.state = "loading";
    return fetch(p.dataset.src, { credentials: "same-origin" }).then(function (r) {
      if (!r.ok) { throw new Error("HTTP " + r.status); }
      return r.text();
    }).then(function (html) {
      var t = document.createElement("template");
      t.innerHTML = html;  // our own rendering: transcript text arrives escaped
      p.replaceWith(t.content);
      pin();
    }).catch(function (err) {
      p.dataset.state = "";
      p.textContent = "could not load these turns (" + err.message + "); reload the page";
    });
  }
  var observer = "IntersectionObserver" in window ? new IntersectionObserver(function (entries) {
    entries.forEach(function (en) { if (en.isIntersecting) { observer.unobserve(en.target); load(en.target); } });
  }, { rootMargin: "0px 0px 1200px 0px" }) : null;
  // A link followed (a lane, a search hit) stays on its target until the reader moves.
  var pinned = null;
  function pin() {
    if (pinned) { var el = document.getElementById(pinned); if (el) { el.scrollIntoView(); } }
  }
  ["wheel", "keydown", "touchstart", "mousedown"].forEach(function (kind) {
    window.addEventListener(kind, function () { pinned = null; }, { passive: true });
  });
  parts.forEach(function (p) {
    p.querySelector("a").addEventListener("click", function (ev) { ev.preventDefault(); load(p); });
    if (observer) { observer.observe(p); }
  });
  function jump() {
    var id = decodeURIComponent(location.hash.slice(1));
    pinned = id || null;
    var m = /^t-(.+)-(\d+)$/.exec(id);
    if (!m || document.getElementById(id)) { return; }
    var n = parseInt(m[2], 10);
    var p = parts.filter(function (q) {
      return q.dataset.section === m[1] && +q.dataset.first <= n && n <= +q.dataset.last;
    })[0];
    if (p) { load(p); }
  }
  window.addEventListener("hashchange", jump);
  jump();
})();
