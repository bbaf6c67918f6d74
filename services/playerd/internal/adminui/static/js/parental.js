// Parental controls: bedtime per weekday with the night's maximum volume,
// the daily limit, bedtime content and locked folders
// (/api/admin/parental, saved whole), what the rules do right now (the
// status's restrictions, live from the event stream) and the sleep timer.
import { el, replace, errorBox, okBox, card, fieldBox, fieldError, clearErrors, fmtClock, fmtTime } from './dom.js';
import { t } from './i18n.js';
import { follow } from './live.js';

const days = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

const num = (id, min, max) => el('input', { type: 'number', id, min, max, step: 1, inputMode: 'numeric' });

export function render({ api }) {
  let library = [];
  const err = errorBox(), ok = okBox();
  err.id = 'parental-err';
  ok.id = 'parental-ok';

  // Bedtime and the daily limit, a line per weekday.
  const win = {}, limit = {};
  const dayRows = days.map((d) => {
    win[d] = {
      start: el('input', { type: 'time', id: `bed-${d}-start`, 'aria-label': `${t(`day.${d}`)} ${t('parental.from')}` }),
      end: el('input', { type: 'time', id: `bed-${d}-end`, 'aria-label': `${t(`day.${d}`)} ${t('parental.to')}` }),
    };
    limit[d] = num(`limit-${d}`, 0, 1440);
    limit[d].placeholder = '–';
    limit[d].setAttribute('aria-label', `${t(`day.${d}`)} ${t('parental.limit_minutes')}`);
    return el('div', { class: 'day' }, el('strong', {}, t(`day.${d}`)),
      el('div', { class: 'times' }, win[d].start, '–', win[d].end),
      el('label', { class: 'limit' }, el('span', { class: 'muted small' }, t('parental.limit_short')), limit[d]),
      fieldBox(`bedtime.windows.${d}`), fieldBox(`daily_limit_minutes.${d}`));
  });
  const nightMax = num('parental-night-max', 0, 100);
  const grace = num('parental-grace', 0, 240);
  const bedFolders = el('div', { class: 'checks', id: 'parental-bedtime-folders' });
  const locked = el('div', { class: 'checks', id: 'parental-locked' });

  const checks = (box, name, chosen) => replace(box, ...library.map((f) => el('label', { class: 'check' },
    el('input', { type: 'checkbox', name, value: f.id, checked: chosen.includes(f.id) }), f.relative || f.name)),
  library.length ? null : el('p', { class: 'muted' }, t('library.empty')));
  const chosen = (box) => [...box.querySelectorAll('input:checked')].map((i) => i.value);

  function fill(r) {
    const b = r.bedtime || {};
    for (const d of days) {
      const w = (b.windows || {})[d];
      win[d].start.value = w ? w.start : '';
      win[d].end.value = w ? w.end : '';
      const m = (r.daily_limit_minutes || {})[d];
      limit[d].value = m === undefined ? '' : m;
    }
    nightMax.value = b.night_max_volume || 0;
    grace.value = b.grace_minutes || 0;
    checks(bedFolders, 'bedtime', b.folders || []);
    checks(locked, 'locked', r.locked_folders || []);
  }

  async function load() {
    try {
      const [r, lib] = await Promise.all([api.get('/api/admin/parental'), api.get('/api/library')]);
      library = lib;
      fill(r);
    } catch (x) { err.textContent = x.message; }
  }

  const form = el('form', { class: 'stack', id: 'parental-form', onsubmit: async (e) => {
    e.preventDefault();
    clearErrors(form);
    ok.textContent = '';
    const windows = {}, daily = {};
    for (const d of days) {
      // A day with neither time has no bedtime; with one of them the box
      // says what is missing.
      if (win[d].start.value || win[d].end.value) windows[d] = { start: win[d].start.value, end: win[d].end.value };
      if (limit[d].value !== '') daily[d] = Number(limit[d].value);
    }
    const body = {
      bedtime: { windows, folders: chosen(bedFolders), night_max_volume: Number(nightMax.value || 0), grace_minutes: Number(grace.value || 0) },
      daily_limit_minutes: daily,
      locked_folders: chosen(locked),
    };
    try {
      fill(await api.jsonReq('PUT', '/api/admin/parental', body));
      ok.textContent = t('saved');
    } catch (x) { fieldError(form, err, x); }
  } },
  el('h3', {}, t('parental.week')),
  el('p', { class: 'muted small' }, t('parental.week_help')),
  el('div', { class: 'week' }, ...dayRows),
  el('div', { class: 'grid2' },
    el('label', {}, t('parental.night_max'), nightMax, el('span', { class: 'muted small' }, t('parental.zero_none')), fieldBox('bedtime.night_max_volume')),
    el('label', {}, t('parental.grace'), grace, el('span', { class: 'muted small' }, t('parental.grace_help')), fieldBox('bedtime.grace_minutes'))),
  el('h3', {}, t('parental.bedtime_folders')),
  el('p', { class: 'muted small' }, t('parental.bedtime_folders_help')), bedFolders, fieldBox('bedtime.folders'),
  el('h3', {}, t('parental.locked')),
  el('p', { class: 'muted small' }, t('parental.locked_help')), locked, fieldBox('locked_folders'),
  err, ok,
  el('button', { type: 'submit', class: 'primary', id: 'parental-save' }, t('save')));

  // What the rules do now.
  const now = el('dl', { class: 'kv', id: 'restrictions' });
  function showNow(r) {
    if (!r) return;
    const dl = r.daily_limit, bt = r.bedtime, sl = r.sleep_timer;
    replace(now,
      el('dt', {}, t('parental.now')), el('dd', { id: 'restrictions-active' }, r.active ? t(`rule.${r.active}`, fmtClock(r.until)) : t('parental.free')),
      el('dt', {}, t('parental.bedtime')), el('dd', {}, bt ? t('parental.bedtime_on', fmtClock(bt.until), bt.night_max_volume ?? '–') : t('parental.off')),
      el('dt', {}, t('parental.today')), el('dd', {}, dl ? t('parental.limit_state', Math.round(dl.used_seconds / 60), dl.minutes, dl.minutes_left) : t('parental.no_limit')),
      el('dt', {}, t('parental.sleep')), el('dd', { id: 'restrictions-sleep' }, !sl ? t('parental.off')
        : sl.until === 'time' ? t('parental.sleep_left', fmtTime(sl.left_seconds), fmtClock(sl.ends_at)) : t(`parental.sleep_${sl.until}`)),
      el('dt', {}, t('parental.locked')), el('dd', { id: 'restrictions-locked' }, String(r.locked_folders)),
      r.clock !== 'set' ? [el('dt', {}, t('parental.clock')), el('dd', { class: 'err' }, t(`parental.clock_${r.clock}`))] : null);
  }
  const close = follow({
    status: (s) => showNow(s.restrictions),
    restrictions: showNow,
  });

  // The sleep timer is a command, open to anyone, so it goes through the
  // player's command path like the box's own moon button.
  const sErr = errorBox();
  const sleep = (value) => async () => {
    sErr.textContent = '';
    try { showNow((await api.jsonReq('POST', '/api/command', { action: 'sleep_timer', value })).restrictions); } catch (x) { sErr.textContent = x.message; }
  };
  const sleepButtons = el('div', { class: 'row', id: 'sleep-buttons' },
    ...[15, 30, 60].map((m) => el('button', { type: 'button', id: `sleep-${m}`, onclick: sleep(m) }, t('parental.minutes', m))),
    el('button', { type: 'button', id: 'sleep-track', onclick: sleep('track') }, t('parental.sleep_end_track')),
    el('button', { type: 'button', id: 'sleep-folder', onclick: sleep('folder') }, t('parental.sleep_end_folder')),
    el('button', { type: 'button', id: 'sleep-off', onclick: sleep(0) }, t('parental.sleep_cancel')));

  load();
  return {
    wide: true,
    stop: close,
    nodes: [
      card(t('parental.title'), form),
      el('div', { class: 'stack' },
        card(t('parental.now_title'), now),
        card(t('parental.sleep'), el('p', { class: 'muted small' }, t('parental.sleep_help')), sleepButtons, sErr)),
    ],
  };
}
