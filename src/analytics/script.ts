// The browser script served at GET /v1/analytics/script.js: no dependencies, ~1 KB. It records the
// first page view and every client-side navigation (history.pushState/replaceState, popstate) of
// single-page docs sites, and posts {path, referrer?, visitorId?, status?} to the project's collect
// endpoint. The visitor id is a random first-party id in localStorage; without storage the server uses a
// daily-salted hash of IP + user agent instead.
// A site's "page not found" says so, and the view is then reported as not found, not as a page view:
// a static 404 page by the tag's attribute `data-status="404"`, a single-page site's not-found view by
// calling `folio.notFound()` when it renders. Each view is sent a moment after it starts (or when the
// page is hidden), so such a call made while the view renders still turns it into a not-found view.
import { createHash } from 'node:crypto';

export const BROWSER_SCRIPT = `/*! Folio analytics: <script defer src="https://folio.example/v1/analytics/script.js" data-project="PROJECT_ID"></script> */
(function () {
  var s = document.currentScript;
  if (!s) return;
  var project = s.getAttribute('data-project');
  if (!project) return;
  var api = s.getAttribute('data-api') || new URL(s.src, location.href).origin;
  var endpoint = api + '/v1/analytics/' + encodeURIComponent(project) + '/collect';
  var vid = null;
  try {
    vid = localStorage.getItem('folio_vid');
    if (!vid) {
      vid = (crypto.randomUUID ? crypto.randomUUID() : Date.now().toString(36) + Math.random().toString(36).slice(2)).replace(/[^A-Za-z0-9_-]/g, '');
      localStorage.setItem('folio_vid', vid);
    }
  } catch (e) {
    vid = null;
  }
  var last = null;
  var referrer = document.referrer || null;
  var status = Number(s.getAttribute('data-status')) || null;
  var pending = null;
  var pendingPath = null;
  function send() {
    if (pending) { clearTimeout(pending); pending = null; }
    var path = pendingPath || location.pathname;
    pendingPath = null;
    if (path === last) return;
    last = path;
    var body = { path: path };
    if (referrer) body.referrer = referrer.slice(0, 2048);
    if (vid) body.visitorId = vid;
    if (status) body.status = status;
    referrer = null;
    status = null;
    post(body);
  }
  function later() {
    // The view before this navigation goes now, as it was.
    if (pending) send();
    pendingPath = location.pathname;
    pending = setTimeout(send, 150);
  }
  function post(body) {
    var data = JSON.stringify(body);
    try {
      if (navigator.sendBeacon && navigator.sendBeacon(endpoint, data)) return;
    } catch (e) {}
    try {
      fetch(endpoint, { method: 'POST', body: data, keepalive: true, mode: 'cors', credentials: 'omit', headers: { 'content-type': 'text/plain' } })['catch'](function () {});
    } catch (e) {}
  }
  window.folio = {
    notFound: function () {
      status = 404;
      // Already sent as a page view (called late): the not-found view is sent on its own.
      if (!pending && last === location.pathname) { last = null; send(); }
    }
  };
  function wrap(name) {
    var orig = history[name];
    history[name] = function () {
      var r = orig.apply(this, arguments);
      later();
      return r;
    };
  }
  wrap('pushState');
  wrap('replaceState');
  addEventListener('popstate', later);
  addEventListener('pagehide', function () { if (pending) send(); });
  if (document.visibilityState === 'prerender') {
    document.addEventListener('visibilitychange', function once() {
      if (document.visibilityState !== 'prerender') { document.removeEventListener('visibilitychange', once); later(); }
    });
  } else later();
})();
`;

export const BROWSER_SCRIPT_ETAG = '"' + createHash('sha256').update(BROWSER_SCRIPT).digest('base64url').slice(0, 16) + '"';
