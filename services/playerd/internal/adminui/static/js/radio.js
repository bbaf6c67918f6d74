// Radio stations and podcasts (/api/admin/stations, /api/admin/podcasts):
// list, add, change, delete; a podcast's feed is fetched when it is added
// and on demand. The box checks every address and says what is wrong,
// next to the field.
import { el, replace, errorBox, okBox, card, confirmButton, fieldBox, fieldError, clearErrors, fmtClock } from './dom.js';
import { t } from './i18n.js';

const input = (attrs) => el('input', { autocomplete: 'off', ...attrs });

export function render({ api }) {
  const stations = el('ul', { class: 'list', id: 'stations-list' });
  const podcasts = el('ul', { class: 'list', id: 'podcasts-list' });
  const sErr = errorBox(), pErr = errorBox();

  async function loadStations() {
    sErr.textContent = '';
    try {
      const r = await api.get('/api/admin/stations');
      replace(stations, ...r.stations.map(stationRow));
      if (!r.stations.length) stations.append(el('li', { class: 'muted' }, t('radio.no_stations')));
    } catch (x) { sErr.textContent = x.message; }
  }

  async function loadPodcasts() {
    pErr.textContent = '';
    try {
      const r = await api.get('/api/admin/podcasts');
      replace(podcasts, ...r.podcasts.map(podcastRow));
      if (!r.podcasts.length) podcasts.append(el('li', { class: 'muted' }, t('radio.no_podcasts')));
    } catch (x) { pErr.textContent = x.message; }
  }

  // stationForm edits s (a new station when s is null).
  function stationForm(s, done) {
    const err = errorBox();
    const name = input({ class: 'station-name', required: true, maxLength: 100, value: s ? s.name : '' });
    const url = input({ class: 'station-url', type: 'url', required: true, inputMode: 'url', value: s ? s.url : '', placeholder: 'https://…' });
    const cover = input({ class: 'station-cover', type: 'url', inputMode: 'url', value: s ? s.cover_url || '' : '', placeholder: 'https://…' });
    const form = el('form', { class: 'stack station-form', noValidate: true, onsubmit: async (e) => {
      e.preventDefault();
      clearErrors(form);
      const body = { name: name.value.trim(), url: url.value.trim() };
      if (cover.value.trim()) body.cover_url = cover.value.trim();
      try {
        if (s) await api.jsonReq('PUT', `/api/admin/stations/${s.id}`, body);
        else await api.jsonReq('POST', '/api/admin/stations', body);
        if (!s) { name.value = ''; url.value = ''; cover.value = ''; }
        if (done) done();
        await loadStations();
      } catch (x) { fieldError(form, err, x); }
    } },
    el('label', {}, t('radio.name'), name, fieldBox('name')),
    el('label', {}, t('radio.stream'), url, fieldBox('url')),
    el('label', {}, t('radio.cover'), cover, fieldBox('cover_url')),
    err,
    el('div', { class: 'row' }, el('button', { type: 'submit', class: 'primary station-save' }, s ? t('save') : t('radio.add_station')),
      s ? el('button', { type: 'button', onclick: done }, t('cancel')) : null));
    return form;
  }

  function stationRow(s) {
    const err = errorBox();
    const li = el('li', { dataset: { station: s.name } });
    const show = () => replace(li,
      el('div', {}, el('strong', {}, s.name)), el('div', { class: 'mono small muted' }, s.url),
      el('div', { class: 'row' },
        el('button', { type: 'button', class: 'station-edit', onclick: () => replace(li, stationForm(s, show)) }, t('radio.edit')),
        confirmButton(t('radio.delete'), t('radio.delete_confirm'), async () => {
          err.textContent = '';
          try { await api.jsonReq('DELETE', `/api/admin/stations/${s.id}`, {}); await loadStations(); } catch (x) { err.textContent = x.message; }
        })), err);
    show();
    return li;
  }

  // podcastForm edits p (a new podcast when p is null). The box fetches
  // the feed before it answers (up to 30 s), so the button says so.
  function podcastForm(p, done) {
    const err = errorBox(), busy = okBox();
    const url = input({ class: 'podcast-url', type: 'url', required: true, inputMode: 'url', value: p ? p.url : '', placeholder: 'https://…/feed.xml' });
    const name = input({ class: 'podcast-name', maxLength: 100, value: p ? p.name || '' : '', placeholder: t('radio.podcast_name_hint') });
    const save = el('button', { type: 'submit', class: 'primary podcast-save' }, p ? t('save') : t('radio.add_podcast'));
    const form = el('form', { class: 'stack podcast-form', noValidate: true, onsubmit: async (e) => {
      e.preventDefault();
      clearErrors(form);
      const body = { url: url.value.trim() };
      if (name.value.trim()) body.name = name.value.trim();
      save.disabled = true;
      busy.textContent = t('radio.fetching');
      try {
        if (p) await api.jsonReq('PUT', `/api/admin/podcasts/${p.id}`, body);
        else await api.jsonReq('POST', '/api/admin/podcasts', body);
        if (!p) { url.value = ''; name.value = ''; }
        if (done) done();
        await loadPodcasts();
      } catch (x) { fieldError(form, err, x); }
      save.disabled = false;
      busy.textContent = '';
    } },
    el('label', {}, t('radio.feed'), url, fieldBox('url')),
    el('label', {}, t('radio.name_optional'), name, fieldBox('name')),
    err, busy,
    el('div', { class: 'row' }, save, p ? el('button', { type: 'button', onclick: done }, t('cancel')) : null));
    return form;
  }

  function podcastRow(p) {
    const err = errorBox();
    const li = el('li', { dataset: { podcast: p.url } });
    const refresh = el('button', { type: 'button', class: 'podcast-refresh', onclick: async () => {
      err.textContent = '';
      refresh.disabled = true;
      try { await api.jsonReq('POST', `/api/admin/podcasts/${p.id}/refresh`, {}); await loadPodcasts(); } catch (x) { err.textContent = x.message; refresh.disabled = false; }
    } }, t('radio.refresh'));
    const show = () => replace(li,
      el('div', {}, el('strong', {}, p.name || p.title || p.url), p.name && p.title && p.name !== p.title ? el('span', { class: 'muted' }, ` (${p.title})`) : null),
      el('div', { class: 'mono small muted' }, p.url),
      el('div', { class: 'small podcast-state' }, t('radio.episodes', p.episodes || 0), p.refreshed_at ? ` · ${t('radio.refreshed', fmtClock(p.refreshed_at))}` : ''),
      p.error ? el('div', { class: 'err small' }, p.error) : null,
      el('div', { class: 'row' }, refresh,
        el('button', { type: 'button', onclick: () => replace(li, podcastForm(p, show)) }, t('radio.edit')),
        confirmButton(t('radio.delete'), t('radio.delete_confirm'), async () => {
          err.textContent = '';
          try { await api.jsonReq('DELETE', `/api/admin/podcasts/${p.id}`, {}); await loadPodcasts(); } catch (x) { err.textContent = x.message; }
        })), err);
    show();
    return li;
  }

  const newStation = stationForm(null);
  newStation.id = 'station-form';
  const newPodcast = podcastForm(null);
  newPodcast.id = 'podcast-form';

  loadStations();
  loadPodcasts();
  return {
    wide: true,
    nodes: [
      el('div', { class: 'stack' },
        card(t('radio.stations'), sErr, stations, el('h3', {}, t('radio.new_station')), el('p', { class: 'muted small' }, t('radio.station_help')), newStation)),
      el('div', { class: 'stack' },
        card(t('radio.podcasts'), pErr, podcasts, el('h3', {}, t('radio.new_podcast')), el('p', { class: 'muted small' }, t('radio.podcast_help')), newPodcast)),
    ],
  };
}
