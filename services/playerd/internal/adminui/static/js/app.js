// The admin page: first start, login, and the sections. Each section is a
// module with render(ctx) → {node, stop?}; the hash names the open one.
import * as api from './api.js';
import { t, setLang, lang, setBoxLang, boxLang, clearOwnLang } from './i18n.js';
import { el, replace, errorBox, card } from './dom.js';
import * as player from './player.js';
import * as settings from './settings.js';
import * as library from './library.js';
import * as home from './home.js';
import * as radio from './radio.js';
import * as parental from './parental.js';
import * as cards from './cards.js';
import * as input from './input.js';
import * as network from './network.js';
import * as system from './system.js';
import * as household from './household.js';

const sections = [
  ['player', player], ['settings', settings], ['library', library], ['home', home],
  ['radio', radio], ['parental', parental], ['cards', cards], ['input', input],
  ['network', network], ['household', household], ['system', system],
];

const main = document.getElementById('main');
const nav = document.getElementById('nav');
const banner = document.getElementById('banner');
const logoutBtn = document.getElementById('logout');
const langBtn = document.getElementById('lang-toggle');

let current = null; // the open section: {name, stop}
let screen = 'loading'; // loading | first | login | app
let loginNote = '';

function stopCurrent() {
  if (current && current.stop) current.stop();
  current = null;
}

// readBoxLang asks the box which language its words are in: the box
// decides it from its language setting (ui_language), the page does not.
async function readBoxLang() {
  const info = await api.get('/api/info');
  setBoxLang(info.ui_language);
}

// The context the sections get: the API, the box's language, and a way to
// redraw after the box's language changed.
const ctx = {
  api,
  boxLang,
  async languageChanged() {
    try { await readBoxLang(); } catch { /* the page keeps the language it has */ }
    clearOwnLang();
    redraw();
  },
};

function redraw() {
  document.documentElement.lang = lang();
  langBtn.textContent = lang() === 'de' ? 'EN' : 'DE';
  logoutBtn.textContent = t('logout');
  if (screen === 'first') showFirst();
  else if (screen === 'login') showLogin();
  else if (screen === 'app') showApp();
}

function showFirst() {
  screen = 'first';
  stopCurrent();
  nav.hidden = true;
  logoutBtn.hidden = true;
  const err = errorBox();
  const pw = el('input', { type: 'password', id: 'first-password', autocomplete: 'new-password', minLength: 10, maxLength: 128, required: true });
  const pw2 = el('input', { type: 'password', id: 'first-password2', autocomplete: 'new-password', minLength: 10, maxLength: 128, required: true });
  const form = el('form', { id: 'first-form', onsubmit: async (e) => {
    e.preventDefault();
    err.textContent = '';
    if (pw.value !== pw2.value) { err.textContent = t('first.mismatch'); pw2.focus(); return; }
    if ([...pw.value].length < 10) { err.textContent = t('first.short'); pw.focus(); return; }
    try {
      await api.jsonReq('PUT', '/api/admin/password', { new_password: pw.value });
      showApp();
    } catch (x) { err.textContent = x.message; }
  } },
  el('label', {}, t('first.password'), pw),
  el('label', {}, t('first.repeat'), pw2),
  err,
  el('button', { type: 'submit', class: 'primary', id: 'first-submit' }, t('first.submit')));
  replace(main, el('div', { class: 'narrow stack' },
    card(t('first.title'), el('p', {}, t('first.intro')), form),
    card(t('reset.title'), el('ol', {}, ...t('reset.steps').map((s) => el('li', {}, s))), el('p', { class: 'muted small' }, t('reset.note')))));
  main.className = '';
  pw.focus();
}

function showLogin(note) {
  if (note !== undefined) loginNote = note;
  screen = 'login';
  stopCurrent();
  nav.hidden = true;
  logoutBtn.hidden = true;
  const err = errorBox();
  const pw = el('input', { type: 'password', id: 'login-password', autocomplete: 'current-password', required: true });
  const form = el('form', { id: 'login-form', onsubmit: async (e) => {
    e.preventDefault();
    err.textContent = '';
    try {
      await api.jsonReq('POST', '/api/admin/login', { password: pw.value });
      loginNote = '';
      showApp();
    } catch (x) {
      err.textContent = x.status === 401 ? t('login.wrong') : x.message;
      pw.select();
    }
  } },
  loginNote ? el('p', { class: 'okmsg', id: 'login-note' }, loginNote) : null,
  el('label', {}, t('login.password'), pw), err,
  el('button', { type: 'submit', class: 'primary', id: 'login-submit' }, t('login.submit')));
  replace(main, el('div', { class: 'narrow stack' },
    card(t('login.title'), form),
    card(t('reset.title'), el('p', {}, t('reset.short')), el('ol', {}, ...t('reset.steps').map((s) => el('li', {}, s))))));
  main.className = '';
  pw.focus();
}

function showApp() {
  screen = 'app';
  nav.hidden = false;
  logoutBtn.hidden = false;
  const name = location.hash.slice(1);
  open(sections.some(([n]) => n === name) ? name : 'player');
}

function open(name) {
  stopCurrent();
  replace(nav, ...sections.map(([n]) => el('button', {
    type: 'button', id: `nav-${n}`, 'aria-current': n === name ? 'page' : false,
    onclick: () => { if (location.hash !== `#${n}`) location.hash = n; else open(n); },
  }, t(`nav.${n}`))));
  // On a phone the tabs scroll sideways: keep the open one in sight.
  const tab = document.getElementById(`nav-${name}`);
  if (tab && tab.scrollIntoView) tab.scrollIntoView({ block: 'nearest', inline: 'nearest' });
  const mod = sections.find(([n]) => n === name)[1];
  const view = mod.render(ctx);
  current = { name, stop: view.stop };
  main.className = view.wide ? 'two' : '';
  main.dataset.view = name;
  replace(main, ...view.nodes);
}

window.addEventListener('hashchange', () => { if (screen === 'app') showApp(); });

langBtn.addEventListener('click', () => { setLang(lang() === 'de' ? 'en' : 'de'); redraw(); });

logoutBtn.addEventListener('click', async () => {
  try {
    await api.jsonReq('POST', '/api/admin/logout', {});
    showLogin(t('login.loggedout'));
  } catch (x) { banner.hidden = false; banner.textContent = x.message; }
});

// A 401 anywhere means the session ended (expired after 12 hours, the
// password changed, or someone logged out everywhere): back to the login,
// saying why.
api.on('unauthorized', () => { if (screen === 'app') showLogin(t('login.expired')); });
api.on('offline', () => { banner.hidden = false; banner.textContent = t('err.offline.banner'); });
api.on('online', () => { banner.hidden = true; if (screen === 'app' && current) open(current.name); else start(); });

async function start() {
  try {
    await readBoxLang();
  } catch { /* the page still works in the language it has */ }
  redraw();
  try {
    const a = await api.get('/api/admin/auth');
    if (!a.protected) showFirst();
    else if (!a.authenticated) showLogin('');
    else showApp();
  } catch (x) {
    replace(main, card(t('err.title'), el('p', { class: 'err' }, x.message)));
  }
}

start();
