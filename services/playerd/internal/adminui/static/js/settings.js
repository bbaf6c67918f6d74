// The settings document: volumes, language and voice, display, power, time
// zone and host name. Saving sends only what this form shows; the box
// validates the whole and names a wrong field.
import { el, errorBox, okBox, card } from './dom.js';
import { t, lang } from './i18n.js';

const num = (id, min, max) => el('input', { type: 'number', id: `set-${id}`, name: id, min, max, step: 1, required: true, inputMode: 'numeric' });

export function render(ctx) {
  const { api } = ctx;
  const err = errorBox(), ok = okBox();
  err.id = 'settings-err';
  ok.id = 'settings-ok';
  const f = {
    max_volume: num('max_volume', 1, 100), startup_volume: num('startup_volume', 1, 100),
    announcement_volume: num('announcement_volume', 1, 100), min_volume: num('min_volume', 0, 100),
    headphones: el('input', { type: 'checkbox', id: 'set-headphones' }),
    headphone_max_volume: num('headphone_max_volume', 1, 100),
    headphone_device: el('input', { id: 'set-headphone_device', autocomplete: 'off', maxLength: 64, pattern: '[A-Za-z0-9 _.,:\\-]*' }),
    normalize: el('select', { id: 'set-normalize' }, ...['folder', 'track', 'off'].map((v) => el('option', { value: v }, t(`settings.normalize_${v}`)))),
    language: el('select', { id: 'set-language' }, el('option', { value: 'de' }, 'Deutsch'), el('option', { value: 'en' }, 'English')),
    speech_engine: el('select', { id: 'set-speech_engine' }, ...['auto', 'pico', 'espeak'].map((v) => el('option', { value: v }, v))),
    rate: num('rate', 50, 200), pitch: num('pitch', 50, 200),
    idle_off_minutes: num('idle_off_minutes', 0, 1440), brightness: num('brightness', 1, 100),
    idle_shutdown_minutes: num('idle_shutdown_minutes', 0, 1440),
    calm: el('input', { type: 'checkbox', id: 'set-calm', name: 'calm' }),
    time_zone: el('input', { id: 'set-time_zone', autocomplete: 'off' }),
    host_name: el('input', { id: 'set-host_name', autocomplete: 'off', pattern: '[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?' }),
  };
  let current = null;
  const fill = (s) => {
    current = s;
    f.max_volume.value = s.audio.max_volume;
    f.startup_volume.value = s.audio.startup_volume;
    f.announcement_volume.value = s.audio.announcement_volume;
    f.headphones.checked = s.audio.headphones;
    f.headphone_max_volume.value = s.audio.headphone_max_volume;
    f.headphone_device.value = s.audio.headphone_device;
    f.min_volume.value = s.audio.min_volume;
    f.calm.checked = s.calm;
    f.normalize.value = s.audio.normalize;
    const l = (s.language || 'de').slice(0, 2);
    if (![...f.language.options].some((o) => o.value === s.language)) f.language.append(el('option', { value: s.language }, s.language));
    f.language.value = [...f.language.options].some((o) => o.value === s.language) ? s.language : l;
    f.speech_engine.value = s.speech.engine;
    f.rate.value = s.speech.rate;
    f.pitch.value = s.speech.pitch;
    f.idle_off_minutes.value = s.display.idle_off_minutes;
    f.brightness.value = s.display.brightness;
    f.idle_shutdown_minutes.value = s.power.idle_shutdown_minutes;
    f.time_zone.value = s.time_zone;
    f.host_name.value = s.host_name;
  };
  api.get('/api/admin/settings').then(fill, (x) => { err.textContent = x.message; });

  const save = async (e) => {
    e.preventDefault();
    err.textContent = ''; ok.textContent = '';
    const n = (k) => Number(f[k].value);
    const body = {
      language: f.language.value,
      speech: { engine: f.speech_engine.value, rate: n('rate'), pitch: n('pitch') },
      audio: {
        max_volume: n('max_volume'), startup_volume: n('startup_volume'), announcement_volume: n('announcement_volume'), min_volume: n('min_volume'),
        normalize: f.normalize.value,
        headphones: f.headphones.checked, headphone_max_volume: n('headphone_max_volume'), headphone_device: f.headphone_device.value.trim(),
      },
      display: { idle_off_minutes: n('idle_off_minutes'), brightness: n('brightness') },
      power: { idle_shutdown_minutes: n('idle_shutdown_minutes') },
      calm: f.calm.checked,
      time_zone: f.time_zone.value.trim(), host_name: f.host_name.value.trim(),
    };
    try {
      const res = await api.jsonReq('PUT', '/api/admin/settings', body);
      const changedLang = current && res.settings.language !== current.language;
      fill(res.settings);
      ok.textContent = t('saved');
      if (changedLang) await ctx.languageChanged();
    } catch (x) { err.textContent = x.message; }
  };

  const speakErr = errorBox(), speakOk = okBox();
  speakErr.id = 'settings-speak-err';
  const speak = async () => {
    speakErr.textContent = ''; speakOk.textContent = '';
    try {
      // The sample is in the page's language: the box's voice says it
      // when that is the box's language, else the page names it.
      const r = await api.jsonReq('POST', '/api/speak', lang() === ctx.boxLang() ? { text: t('settings.sample') } : { text: t('settings.sample'), language: lang() });
      speakOk.textContent = r.speaking ? t('settings.speaking') : t('settings.queued');
    } catch (x) { speakErr.textContent = x.message; }
  };

  const lab = (k, input, hint) => el('label', {}, t(`settings.${k}`), input, hint ? el('span', { class: 'muted small' }, hint) : null);
  return {
    nodes: [card(t('nav.settings'), el('form', { id: 'settings-form', onsubmit: save },
      el('h3', {}, t('settings.volumes')),
      el('div', { class: 'grid2' }, lab('max_volume', f.max_volume), lab('startup_volume', f.startup_volume), lab('announcement_volume', f.announcement_volume),
        lab('min_volume', f.min_volume, t('settings.min_volume_hint')), lab('normalize', f.normalize, t('settings.normalize_hint'))),
      el('label', { class: 'check' }, f.calm, t('settings.calm'), el('span', { class: 'muted small' }, t('settings.calm_hint'))),
      el('h3', {}, t('settings.headphones_title')),
      el('p', { class: 'muted small' }, t('settings.headphones_hint')),
      el('div', { class: 'grid2' }, lab('headphones', f.headphones), lab('headphone_max_volume', f.headphone_max_volume),
        lab('headphone_device', f.headphone_device, t('settings.headphone_device_hint'))),
      el('h3', {}, t('settings.language_voice')),
      el('div', { class: 'grid2' }, lab('language', f.language), lab('engine', f.speech_engine), lab('rate', f.rate), lab('pitch', f.pitch)),
      el('div', { class: 'row' }, el('button', { type: 'button', id: 'settings-speak', onclick: speak }, t('settings.test_voice'))), speakErr, speakOk,
      el('h3', {}, t('settings.display_power')),
      el('div', { class: 'grid2' }, lab('idle_off_minutes', f.idle_off_minutes, t('settings.zero_never')), lab('brightness', f.brightness),
        lab('idle_shutdown_minutes', f.idle_shutdown_minutes, t('settings.zero_never'))),
      el('h3', {}, t('settings.box')),
      el('div', { class: 'grid2' }, lab('time_zone', f.time_zone), lab('host_name', f.host_name)),
      err, ok,
      el('button', { type: 'submit', class: 'primary', id: 'settings-save' }, t('save'))))],
  };
}
