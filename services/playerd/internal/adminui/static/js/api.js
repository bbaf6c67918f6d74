// The page's one way to the box. JSON bodies go as application/json; the
// session is the HttpOnly cookie the box sets, sent because the page and
// the API share an origin.
import { t, has } from './i18n.js';

export class ApiError extends Error {
  constructor(status, message, retryAfter, raw, code) {
    super(message);
    this.status = status;
    this.retryAfter = retryAfter;
    this.code = code;
    // The box's own words, which start with the field they are about.
    this.raw = raw ?? message;
  }
}

const hooks = { unauthorized: () => {}, offline: () => {}, online: () => {} };
export function on(name, f) { hooks[name] = f; }

let offline = false;
let probeTimer = 0;
async function probe() {
  clearTimeout(probeTimer);
  try {
    const r = await fetch('/api/health', { cache: 'no-store' });
    if (r.ok) {
      if (offline) { offline = false; hooks.online(); }
      return;
    }
  } catch { /* still gone */ }
  if (offline) probeTimer = setTimeout(probe, 3000);
}

// wentOffline shows the loss at once and recovers by itself: the box
// restarting or Wi-Fi dropping for a moment is normal, so keep asking
// until it answers. The event stream reports its loss here too.
export function wentOffline() {
  if (offline) return;
  offline = true;
  hooks.offline();
  probeTimer = setTimeout(probe, 3000);
}

// The browser knows before any request fails that its network is gone,
// and when it is back, so the page need not wait for the next probe.
window.addEventListener('offline', wentOffline);
window.addEventListener('online', () => { if (offline) probe(); });

// Paths where 401 means "wrong password", not "session over".
const passwordPaths = new Set(['/api/admin/login', '/api/admin/password']);

async function send(method, path, init) {
  let res;
  try {
    res = await fetch(path, { method, credentials: 'same-origin', cache: 'no-store', ...init });
  } catch {
    wentOffline();
    throw new ApiError(0, t('err.offline'));
  }
  return finish(path, res.status, res.headers.get('Content-Type') || '', res.headers.get('Retry-After'), () => res.json());
}

async function finish(path, status, ctype, retryAfter, json) {
  let data = null;
  if (ctype.includes('json')) {
    try { data = await json(); } catch { data = null; }
  }
  if (status >= 200 && status < 300) return data;
  const msg = (data && (data.error || data.message)) || `HTTP ${status}`;
  if (status === 401 && !passwordPaths.has(path)) hooks.unauthorized();
  const code = (data && data.code) || '';
  throw new ApiError(status, explain(status, msg, retryAfter, code), retryAfter, msg, code);
}

// explain says what went wrong in the page's language, by the box's error
// code (the message is English): a code of its own is said in the page's
// words alone; a kind goes before the box's words, which name the field
// or the value that was wrong. A code the page does not know (a newer box)
// falls back to the status.
function explain(status, msg, retryAfter, code) {
  let s;
  if (code && has(`code.${code}`)) s = t(`code.${code}`);
  else if (code && has(`kind.${code}`)) s = `${t(`kind.${code}`)}: ${msg}`;
  else {
    const hint = {
      401: t('err.401'), 403: t('err.403'), 409: t('err.409'), 413: t('err.413'),
      415: t('err.415'), 429: t('err.429'), 502: t('err.502'), 503: t('err.503'),
    }[status];
    s = hint ? `${hint}: ${msg}` : msg;
    if (status >= 500 && !hint) s = `${t('err.500')}: ${msg}`;
  }
  if (status === 429 && retryAfter) s += ` (${t('err.retry', retryAfter)})`;
  return s;
}

export function get(path) { return send('GET', path, {}); }

// jsonReq sends a JSON body; every write of the page that has one uses it.
export function jsonReq(method, path, body = {}) {
  return send(method, path, { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
}

export function rawReq(method, path, body, type) {
  return send(method, path, { headers: { 'Content-Type': type }, body });
}

export function formReq(method, path, form) {
  return send(method, path, { body: form });
}

// upload sends a multipart form with XMLHttpRequest, the one browser API
// that reports upload progress; progress(loaded, total) follows it.
export function upload(path, form, progress) {
  return new Promise((resolve, reject) => {
    const x = new XMLHttpRequest();
    x.open('POST', path);
    x.upload.onprogress = (e) => { if (e.lengthComputable) progress(e.loaded, e.total); };
    x.onerror = () => { wentOffline(); reject(new ApiError(0, t('err.offline'))); };
    x.onload = () => {
      finish(path, x.status, x.getResponseHeader('Content-Type') || '', x.getResponseHeader('Retry-After'),
        async () => JSON.parse(x.responseText)).then(resolve, reject);
    };
    x.send(form);
  });
}
