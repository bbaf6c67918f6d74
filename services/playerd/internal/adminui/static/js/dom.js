// Small DOM helpers: every text goes in as a text node, never as HTML, so
// names of folders, networks and cards cannot inject markup.

import { t, has } from './i18n.js';

// el builds an element: attrs are properties (on* are listeners), children
// are nodes or strings; null and false children are skipped.
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'class') e.className = v;
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else if (k in e && typeof v !== 'string') e[k] = v;
    else e.setAttribute(k, v === true ? '' : v);
  }
  append(e, children);
  return e;
}

function append(e, children) {
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : String(c));
  }
}

// replace empties e and puts the children in.
export function replace(e, ...children) {
  e.replaceChildren();
  append(e, children);
  return e;
}

// errorBox is the place next to a form where its errors are said in words.
export function errorBox() {
  return el('p', { class: 'err', role: 'alert' });
}

export function okBox() {
  return el('p', { class: 'okmsg', role: 'status' });
}

export function card(title, ...children) {
  return el('section', { class: 'card' }, el('h2', {}, title), ...children);
}

export function fmtBytes(n) {
  if (n === null || n === undefined) return '–';
  const u = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1000 && i < u.length - 1) { n /= 1000; i++; }
  return `${n.toFixed(i ? 1 : 0)} ${u[i]}`;
}

export function fmtTime(s) {
  if (!Number.isFinite(s)) return '–';
  s = Math.max(0, Math.round(s));
  const m = Math.floor(s / 60), h = Math.floor(m / 60);
  const mm = String(m % 60).padStart(h ? 2 : 1, '0'), ss = String(s % 60).padStart(2, '0');
  return h ? `${h}:${mm}:${ss}` : `${mm}:${ss}`;
}

// confirmButton asks twice in place instead of a modal dialog: the first
// tap arms it for a few seconds, the second acts.
export function confirmButton(label, armedLabel, action, cls = 'danger') {
  let timer = 0;
  const b = el('button', { type: 'button', class: cls }, label);
  b.addEventListener('click', () => {
    if (!b.dataset.armed) {
      b.dataset.armed = '1';
      b.textContent = armedLabel;
      timer = setTimeout(() => { delete b.dataset.armed; b.textContent = label; }, 5000);
      return;
    }
    clearTimeout(timer);
    delete b.dataset.armed;
    b.textContent = label;
    action(b);
  });
  return b;
}

// fieldError puts the box's message next to the field it is about. The
// box's messages begin with the field's path (url: …,
// categories[1].rows[0].source_ref: …, bedtime.windows.mon: …); the error
// box whose data-field is the longest start of that path gets it, else
// the form's own box. The box said no, so nothing else changes.
export function fieldError(root, fallback, x) {
  const raw = x.raw || x.message;
  const path = (raw.match(/^[A-Za-z_][\w.[\]]*/) || [''])[0];
  let best = null;
  for (const e of root.querySelectorAll('[data-field]')) {
    const f = e.dataset.field;
    const fits = path === f || path.startsWith(`${f}.`) || path.startsWith(`${f}[`);
    if (fits && (!best || f.length > best.dataset.field.length)) best = e;
  }
  const box = best || fallback;
  // Next to its field, the field's path says nothing a parent needs. A
  // code with words of its own says it all (x.message is those words).
  const rest = best && raw.startsWith(`${path}: `) && !has(`code.${x.code}`) ? raw.slice(path.length + 2) : '';
  const kind = x.code && has(`kind.${x.code}`) ? `${t(`kind.${x.code}`)}: ` : '';
  box.textContent = rest ? kind + rest.charAt(0).toUpperCase() + rest.slice(1) : x.message;
  if (box.scrollIntoView) box.scrollIntoView({ block: 'nearest' });
  return box;
}

// fieldBox is the error box of one field (see fieldError).
export function fieldBox(field) {
  const e = errorBox();
  e.dataset.field = field;
  return e;
}

// clearErrors empties every error box below root before the next try.
export function clearErrors(root) {
  for (const e of root.querySelectorAll('.err')) e.textContent = '';
}

// fmtClock shows an RFC 3339 time as the local hour and minute, with the
// weekday when it is not today.
export function fmtClock(s) {
  if (!s) return '–';
  const d = new Date(s);
  if (Number.isNaN(d.getTime())) return s;
  const opts = { hour: '2-digit', minute: '2-digit' };
  if (d.toDateString() !== new Date().toDateString()) opts.weekday = 'short';
  return d.toLocaleString(document.documentElement.lang || undefined, opts);
}
