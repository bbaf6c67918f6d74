// System: battery, machine, power, backup and restore, the password.
import { el, replace, errorBox, okBox, card, fmtBytes, fmtTime, confirmButton } from './dom.js';
import { t } from './i18n.js';

// The box keeps no battery history, so the page keeps what it read (in
// this browser, the last 6 hours) and draws that.
const HISTORY = 'storybox.battery';
const SPAN = 6 * 3600 * 1000;
function remember(percent) {
  let h = [];
  try { h = JSON.parse(localStorage.getItem(HISTORY) || '[]'); } catch { h = []; }
  const now = Date.now();
  if (Number.isFinite(percent)) h.push([now, percent]);
  h = h.filter(([at]) => now - at < SPAN);
  try { localStorage.setItem(HISTORY, JSON.stringify(h)); } catch { /* private mode: no chart */ }
  return h;
}

function chart(h) {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', '0 0 300 80');
  svg.setAttribute('preserveAspectRatio', 'none');
  svg.setAttribute('class', 'chart');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', t('system.chart'));
  const now = Date.now();
  const pl = document.createElementNS(ns, 'polyline');
  pl.setAttribute('points', h.map(([at, p]) => `${(300 * (1 - (now - at) / SPAN)).toFixed(1)},${(80 - 0.8 * p).toFixed(1)}`).join(' '));
  svg.append(pl);
  return svg;
}

export function render({ api }) {
  let stopped = false, timer = 0;
  const bErr = errorBox();
  const battery = el('div', { class: 'stack', id: 'battery' });
  const machine = el('dl', { class: 'kv', id: 'machine' });
  const mErr = errorBox();

  async function loadBattery() {
    try {
      const b = await api.get('/api/hat/status');
      bErr.textContent = '';
      const h = remember(b.battery_percent);
      if (!b.hardware_available || !b.battery_present) {
        replace(battery, el('p', { class: 'muted' }, t('system.no_battery')), b.reason ? el('p', { class: 'muted small' }, b.reason) : null);
      } else {
        replace(battery,
          el('p', {}, el('strong', { class: 'big' }, `${b.battery_percent ?? '–'} %`), ' ',
            b.charging ? t('system.charging') : b.external_power ? t('system.external') : t('system.on_battery'),
            b.level && b.level !== 'ok' ? el('span', { class: 'err' }, ` · ${t(`system.level.${b.level}`)}`) : null),
          el('dl', { class: 'kv' },
            el('dt', {}, t('system.voltage')), el('dd', {}, b.battery_voltage_mv != null ? `${(b.battery_voltage_mv / 1000).toFixed(2)} V` : '–'),
            el('dt', {}, t('system.current')), el('dd', {}, b.battery_current_ma != null ? `${b.battery_current_ma} mA` : '–'),
            el('dt', {}, t('system.temperature')), el('dd', {}, b.temperature_c != null ? `${b.temperature_c} °C` : '–')),
          h.length > 1 ? chart(h) : null,
          el('p', { class: 'muted small' }, t('system.chart_note')));
      }
    } catch (x) { bErr.textContent = x.message; }
  }

  async function loadMachine() {
    try {
      const [m, s] = await Promise.all([api.get('/api/system/metrics'), api.get('/api/admin/system')]);
      mErr.textContent = '';
      const pct = (v) => (v != null ? `${Math.round(v)} %` : '–');
      replace(machine,
        el('dt', {}, t('system.model')), el('dd', {}, s.model),
        el('dt', {}, t('system.version')), el('dd', { id: 'system-version' }, s.versions.playerd),
        el('dt', {}, 'Kernel'), el('dd', {}, s.versions.kernel || '–'),
        el('dt', {}, t('system.uptime')), el('dd', {}, fmtTime(s.uptime_seconds)),
        el('dt', {}, 'CPU'), el('dd', {}, pct(m.cpu_percent)),
        el('dt', {}, t('system.memory')), el('dd', {}, `${pct(m.ram_percent)} (${fmtBytes(s.memory.available_bytes)} ${t('system.free')})`),
        el('dt', {}, t('system.storage')), el('dd', {}, `${pct(m.disk_percent)} · ${t('system.data')}: ${fmtBytes(s.data.free_bytes)} ${t('system.free')}`),
        el('dt', {}, t('system.temperature')), el('dd', {}, m.temperature_c != null ? `${m.temperature_c.toFixed(1)} °C` : '–'));
    } catch (x) { mErr.textContent = x.message; }
  }

  async function tick() {
    await Promise.all([loadBattery(), loadMachine()]);
    if (!stopped) timer = setTimeout(tick, 30000);
  }
  tick();

  // Power.
  const pErr = errorBox(), pOk = okBox();
  const power = (action) => async () => {
    pErr.textContent = ''; pOk.textContent = '';
    try {
      const r = await api.jsonReq('POST', '/api/admin/system/power', { action });
      pOk.textContent = r.dry_run ? t('system.dry_run') : t(`system.${action}_now`);
    } catch (x) { pErr.textContent = x.message; }
  };

  // Backup and restore.
  const rErr = errorBox(), rOk = okBox();
  const archive = el('input', { type: 'file', id: 'restore-file', accept: '.zip,application/zip', required: true });
  const restore = el('form', { class: 'stack', id: 'restore-form', onsubmit: async (e) => {
    e.preventDefault();
    rErr.textContent = ''; rOk.textContent = '';
    const f = archive.files[0];
    if (!f) { rErr.textContent = t('system.choose_backup'); return; }
    const form = new FormData();
    form.append('backup', f, f.name);
    try {
      const r = await api.formReq('POST', '/api/admin/restore', form);
      rOk.textContent = t('system.restored', r.restored.join(', ') || '–');
    } catch (x) { rErr.textContent = x.message; }
  } }, el('label', {}, t('system.restore_file'), archive), el('button', { type: 'submit', id: 'restore-submit' }, t('system.restore')), rErr, rOk);

  // Password change; the box logs out every other device.
  const cErr = errorBox(), cOk = okBox();
  const cur = el('input', { type: 'password', autocomplete: 'current-password', required: true });
  const nw = el('input', { type: 'password', autocomplete: 'new-password', minLength: 10, maxLength: 128, required: true });
  const pwForm = el('form', { class: 'stack', onsubmit: async (e) => {
    e.preventDefault();
    cErr.textContent = ''; cOk.textContent = '';
    try { await api.jsonReq('PUT', '/api/admin/password', { current_password: cur.value, new_password: nw.value }); cur.value = nw.value = ''; cOk.textContent = t('system.pw_changed'); } catch (x) { cErr.textContent = x.message; }
  } }, el('label', {}, t('system.pw_current'), cur), el('label', {}, t('system.pw_new'), nw), cErr, cOk,
  el('button', { type: 'submit' }, t('system.pw_change')));

  return {
    wide: true,
    stop() { stopped = true; clearTimeout(timer); },
    nodes: [
      el('div', { class: 'stack' }, card(t('system.battery'), battery, bErr), card(t('system.machine'), machine, mErr),
        card(t('system.power'), el('div', { class: 'row' },
          confirmButton(t('system.reboot'), t('system.really'), power('reboot')),
          confirmButton(t('system.poweroff'), t('system.really'), power('poweroff'))), pErr, pOk)),
      el('div', { class: 'stack' },
        card(t('system.backup'), el('p', {}, t('system.backup_help')),
          el('div', { class: 'row' }, el('a', { class: 'button primary', id: 'backup-download', href: '/api/admin/backup', download: '' }, t('system.download'))),
          el('h3', {}, t('system.restore')), restore),
        card(t('system.password'), pwForm)),
    ],
  };
}
