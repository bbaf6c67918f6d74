// The household of boxes (syncd, through /api/admin/household): this box,
// the boxes in the household with how far each is, the boxes found on the
// home network, the requests to join, and which media folders are shared.
import { el, replace, errorBox, okBox, card, confirmButton, fmtBytes } from './dom.js';
import { t } from './i18n.js';
import { follow } from './live.js';

export function render({ api }) {
  let stopped = false, timer = 0;
  const err = errorBox(), ok = okBox();
  const self = el('dl', { class: 'kv', id: 'household-self' });
  const boxes = el('ul', { class: 'list', id: 'household-boxes' });
  const requests = el('ul', { class: 'list', id: 'household-requests' });
  const found = el('ul', { class: 'list', id: 'household-found' });
  const media = el('div', { class: 'stack', id: 'household-media' });
  const disk = el('p', { class: 'err', id: 'household-disk', hidden: true }, t('household.disk_full'));

  async function act(method, path, body) {
    err.textContent = ''; ok.textContent = '';
    try { await api.jsonReq(method, path, body || {}); } catch (x) { err.textContent = x.message; }
    await load();
  }

  async function load() {
    let h;
    try { h = await api.get('/api/admin/household'); } catch (x) { err.textContent = x.message; schedule(); return; }
    replace(self,
      el('dt', {}, t('household.state')), el('dd', {}, t(`household.state.${h.state}`)),
      el('dt', {}, t('household.device')), el('dd', { class: 'mono small' }, h.device_id),
      h.last_error ? [el('dt', {}, t('household.last_error')), el('dd', { class: 'err' }, h.last_error)] : null);
    disk.hidden = !h.disk_full;
    replace(boxes, ...h.boxes.map((b) => el('li', {},
      el('div', { class: 'row' }, el('strong', { class: 'grow' }, b.name),
        el('span', { class: 'muted small' }, b.connected
          ? (b.need_files ? t('household.to_sync', b.need_files, fmtBytes(b.need_bytes), Math.floor(b.completion)) : t('household.in_sync'))
          : t('household.not_connected')),
        confirmButton(t('household.remove'), t('household.remove_confirm'), () => act('DELETE', `/api/admin/household/boxes/${encodeURIComponent(b.device_id)}`))))));
    if (!h.boxes.length) boxes.append(el('li', { class: 'muted' }, t('household.alone')));
    for (const f of h.folders) {
      if (f.need_files) boxes.append(el('li', { class: 'muted small' }, t('household.fetching', t(`household.folder.${f.id}`), f.need_files, fmtBytes(f.need_bytes), Math.floor(f.completion))));
      if (f.error) boxes.append(el('li', { class: 'err small' }, `${t(`household.folder.${f.id}`)}: ${f.error}`));
    }
    replace(requests, ...h.requests.map((r) => el('li', {},
      el('div', { class: 'row' }, el('strong', { class: 'grow' }, t('household.asks', r.name)),
        el('button', { type: 'button', class: 'primary', onclick: () => act('POST', `/api/admin/household/requests/${encodeURIComponent(r.device_id)}/accept`) }, t('household.accept')),
        el('button', { type: 'button', onclick: () => act('DELETE', `/api/admin/household/requests/${encodeURIComponent(r.device_id)}`) }, t('household.decline'))))));
    if (!h.requests.length) requests.append(el('li', { class: 'muted' }, t('household.no_requests')));
    const candidates = h.found.filter((f) => !f.in_household);
    replace(found, ...candidates.map((f) => el('li', {},
      el('div', { class: 'row' }, el('strong', { class: 'grow' }, f.name),
        el('button', { type: 'button', class: 'primary', onclick: async () => {
          await act('POST', '/api/admin/household/boxes', { device_id: f.device_id });
          if (!err.textContent) ok.textContent = t('household.asked', f.name);
        } }, t('household.add'))))));
    if (!candidates.length) found.append(el('li', { class: 'muted' }, t('household.none_found')));
    drawMedia(h.media);
    schedule();
  }

  function drawMedia(m) {
    if (media.contains(document.activeElement)) return;
    const all = el('input', { type: 'checkbox', id: 'household-all', checked: m.all });
    const names = el('input', { type: 'text', id: 'household-folders', value: (m.folders || []).join(', '), disabled: m.all, placeholder: t('household.folders_hint') });
    all.onchange = () => { names.disabled = all.checked; };
    replace(media, el('p', {}, t('household.media_intro')),
      el('label', { class: 'check' }, all, t('household.all')),
      el('form', { class: 'row', onsubmit: (e) => {
        e.preventDefault();
        const folders = all.checked ? [] : names.value.split(',').map((s) => s.trim()).filter(Boolean);
        act('PUT', '/api/admin/household/media', { all: all.checked, folders });
      } }, names, el('button', { type: 'submit' }, t('save'))));
  }

  // Progress is polled while the page is open; changes elsewhere are told.
  function schedule() {
    clearTimeout(timer);
    if (!stopped) timer = setTimeout(load, 3000);
  }
  const unfollow = follow({ settings: (d) => { if ((d.sections || []).includes('household')) load(); } });

  load();
  return {
    wide: true,
    stop() { stopped = true; clearTimeout(timer); unfollow(); },
    nodes: [
      card(t('household.title'), el('p', {}, t('household.intro')), self, disk, err, ok,
        el('h3', {}, t('household.boxes')), boxes,
        el('h3', {}, t('household.requests')), requests,
        el('h3', {}, t('household.found')), found),
      card(t('household.media'), media),
    ],
  };
}
