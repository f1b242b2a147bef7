// The browser script served at GET /v1/analytics/script.js: no dependencies, ~1 KB. It records the
// first page view and every client-side navigation (history.pushState/replaceState, popstate) of
// single-page docs sites, and posts {path, referrer?, visitorId?} to the project's collect endpoint.
// The visitor id is a random first-party id in localStorage; without storage the server uses a
// daily-salted hash of IP + user agent instead.
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
  function send() {
    var path = location.pathname;
    if (path === last) return;
    last = path;
    var body = { path: path };
    if (referrer) body.referrer = referrer.slice(0, 2048);
    if (vid) body.visitorId = vid;
    referrer = null;
    var data = JSON.stringify(body);
    try {
      if (navigator.sendBeacon && navigator.sendBeacon(endpoint, data)) return;
    } catch (e) {}
    try {
      fetch(endpoint, { method: 'POST', body: data, keepalive: true, mode: 'cors', credentials: 'omit', headers: { 'content-type': 'text/plain' } })['catch'](function () {});
    } catch (e) {}
  }
  function wrap(name) {
    var orig = history[name];
    history[name] = function () {
      var r = orig.apply(this, arguments);
      setTimeout(send, 0);
      return r;
    };
  }
  wrap('pushState');
  wrap('replaceState');
  addEventListener('popstate', send);
  if (document.visibilityState === 'prerender') {
    document.addEventListener('visibilitychange', function once() {
      if (document.visibilityState !== 'prerender') { document.removeEventListener('visibilitychange', once); send(); }
    });
  } else send();
})();
`;

export const BROWSER_SCRIPT_ETAG = '"' + createHash('sha256').update(BROWSER_SCRIPT).digest('base64url').slice(0, 16) + '"';
