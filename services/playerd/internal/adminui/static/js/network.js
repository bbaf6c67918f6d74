// Wi-Fi (netd, through /api/connectivity) and pairing Home Assistant.
import { el, replace, errorBox, okBox, card, confirmButton } from './dom.js';
import { t } from './i18n.js';

export function render({ api }) {
  let stopped = false, timer = 0;

  // Wi-Fi status, scan, join, known networks, country.
  const wErr = errorBox(), wOk = okBox();
  const status = el('dl', { class: 'kv', id: 'wifi-status' });
  const scanList = el('ul', { class: 'list', id: 'wifi-scan' });
  const knownList = el('ul', { class: 'list', id: 'wifi-known' });
  const country = el('input', { id: 'wifi-country', maxLength: 2, size: 2, pattern: '[A-Z]{2}|00', autocapitalize: 'characters' });

  async function loadWifi() {
    try {
      const s = await api.get('/api/connectivity/wifi/status');
      replace(status,
        el('dt', {}, t('wifi.state')), el('dd', {}, t(`wifi.${s.state}`)),
        el('dt', {}, t('wifi.network')), el('dd', {}, s.ssid || '–'),
        el('dt', {}, t('wifi.signal')), el('dd', {}, s.signal_percent != null ? `${s.signal_percent} %` : '–'),
        el('dt', {}, t('wifi.address')), el('dd', {}, s.ipv4 || '–'),
        s.last_error ? [el('dt', {}, t('wifi.last_error')), el('dd', { class: 'err' }, s.last_error)] : null);
      if (s.country && document.activeElement !== country) country.value = s.country;
      const k = await api.get('/api/connectivity/wifi/networks');
      replace(knownList, ...k.networks.map((n) => {
        const e = errorBox();
        return el('li', {}, el('div', { class: 'row' }, el('strong', { class: 'grow' }, n.ssid),
          confirmButton(t('wifi.forget'), t('wifi.forget_confirm'), async () => {
            try { await api.jsonReq('POST', '/api/connectivity/wifi/forget', { ssid: n.ssid }); await loadWifi(); } catch (x) { e.textContent = x.message; }
          })), e);
      }));
      if (!k.networks.length) knownList.append(el('li', { class: 'muted' }, t('wifi.none_known')));
    } catch (x) { wErr.textContent = x.message; }
  }

  const scanBtn = el('button', { type: 'button', id: 'wifi-scan-btn', onclick: async () => {
    wErr.textContent = '';
    scanBtn.disabled = true;
    try {
      const r = await api.get('/api/connectivity/wifi');
      replace(scanList, ...r.networks.map(network));
      if (!r.networks.length) scanList.append(el('li', { class: 'muted' }, t('wifi.none_found')));
    } catch (x) { wErr.textContent = x.message; }
    scanBtn.disabled = false;
  } }, t('wifi.scan'));

  function network(n) {
    const e = errorBox();
    const pw = el('input', { type: 'password', autocomplete: 'off', 'aria-label': t('wifi.password'), placeholder: t('wifi.password') });
    const open = n.security === 'open';
    return el('li', {}, el('div', { class: 'row' }, el('strong', {}, n.ssid), el('span', { class: 'muted small' }, `${n.signal_percent} % · ${n.security}${n.connected ? ' · ' + t('wifi.connected') : ''}`)),
      el('form', { class: 'row', onsubmit: async (ev) => {
        ev.preventDefault();
        e.textContent = ''; wOk.textContent = t('wifi.joining');
        const body = { ssid: n.ssid };
        if (!open) body.password = pw.value;
        try { await api.jsonReq('POST', '/api/connectivity/wifi/connect', body); wOk.textContent = t('wifi.joined', n.ssid); await loadWifi(); } catch (x) { wOk.textContent = ''; e.textContent = x.message; }
      } }, open ? null : pw, el('button', { type: 'submit', class: 'primary' }, t('wifi.join'))), e);
  }

  const countryForm = el('form', { class: 'row', onsubmit: async (e) => {
    e.preventDefault();
    wErr.textContent = ''; wOk.textContent = '';
    try { await api.jsonReq('PUT', '/api/connectivity/wifi/country', { country: country.value.toUpperCase() }); wOk.textContent = t('saved'); } catch (x) { wErr.textContent = x.message; }
  } }, el('label', {}, t('wifi.country'), country), el('button', { type: 'submit' }, t('save')));

  // Home Assistant: the fingerprint to compare, the pairing window, the
  // paired clients.
  const hErr = errorBox();
  const ha = el('div', { class: 'stack', id: 'ha' });
  const scopes = ['read', 'control', 'notify', 'power'];
  async function loadHA() {
    let s;
    try { s = await api.get('/api/admin/ha'); } catch (x) { hErr.textContent = x.message; return; }
    hErr.textContent = '';
    const boxes = scopes.map((sc) => el('input', { type: 'checkbox', value: sc, checked: sc === 'read' || sc === 'control' }));
    const fp = (s.fingerprint || '').match(/.{1,4}/g) || [];
    const w = s.pairing || {};
    replace(ha,
      el('p', {}, t('ha.intro', s.port)),
      el('div', {}, el('div', { class: 'muted small' }, t('ha.fingerprint')), el('p', { class: 'mono', id: 'ha-fingerprint' }, fp.join(' '))),
      w.window_open
        ? el('div', { class: 'stack' }, el('p', { class: 'okmsg', id: 'ha-window' }, t('ha.open', Math.round(w.window_expires_in || 0))),
          el('button', { type: 'button', onclick: () => act('DELETE') }, t('ha.cancel')))
        : el('div', { class: 'stack' }, el('div', { class: 'row' }, ...boxes.map((b) => el('label', { class: 'check' }, b, t(`ha.scope.${b.value}`)))),
          el('button', { type: 'button', class: 'primary', id: 'ha-open', onclick: () => act('POST', { scopes: boxes.filter((b) => b.checked).map((b) => b.value) }) }, t('ha.allow'))),
      w.pending ? el('p', {}, t('ha.pending')) : null,
      el('h3', {}, t('ha.clients')),
      el('ul', { class: 'list' }, ...(s.clients || []).map((c) => {
        const e = errorBox();
        return el('li', {}, el('strong', {}, c.client_name || c.client_id), el('span', { class: 'muted small' }, (c.scopes || []).join(', ')),
          confirmButton(t('ha.revoke'), t('ha.revoke_confirm'), async () => {
            try { await api.jsonReq('DELETE', `/api/admin/ha/clients/${encodeURIComponent(c.client_id)}`, {}); await loadHA(); } catch (x) { e.textContent = x.message; }
          }), e);
      }), (s.clients || []).length ? null : el('li', { class: 'muted' }, t('ha.no_clients'))));
    clearTimeout(timer);
    if (w.window_open && !stopped) timer = setTimeout(loadHA, 2000);
  }
  async function act(method, body = {}) {
    hErr.textContent = '';
    try { await api.jsonReq(method, '/api/admin/ha/pairing', body); } catch (x) { hErr.textContent = x.message; }
    await loadHA();
  }

  loadWifi();
  loadHA();
  return {
    wide: true,
    stop() { stopped = true; clearTimeout(timer); },
    nodes: [
      card(t('wifi.title'), status, el('div', { class: 'row' }, scanBtn), scanList, wErr, wOk,
        el('h3', {}, t('wifi.known')), knownList, countryForm),
      card(t('ha.title'), ha, hErr),
    ],
  };
}
