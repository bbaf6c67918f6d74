// What plays now, the controls and the volume under its cap. The local API
// has no event stream on this port (the WebSocket is the home-automation
// API's, on TLS with a token), so the status is read every 2 s while this
// section is open, and at once after each command.
import { el, replace, errorBox, card, fmtTime } from './dom.js';
import { t } from './i18n.js';

export function render({ api }) {
  const err = errorBox();
  const cover = el('img', { class: 'cover big', alt: '' });
  const state = el('span', { class: 'state', id: 'player-state' });
  const folder = el('strong', { id: 'player-folder' });
  const track = el('div', {});
  const pos = el('div', { class: 'muted small' });
  const vol = el('input', { type: 'range', id: 'player-volume', min: 0, max: 100, step: 1 });
  const volLabel = el('span', { id: 'player-volume-label' });
  let dragging = false;

  const command = async (body) => {
    err.textContent = '';
    try { show(await api.jsonReq('POST', '/api/command', body)); } catch (x) { err.textContent = x.message; }
  };
  vol.addEventListener('input', () => { dragging = true; volLabel.textContent = t('player.volume', vol.value, vol.max); });
  vol.addEventListener('change', () => { dragging = false; command({ action: 'volume', value: Number(vol.value) }); });

  function show(s) {
    state.textContent = t(`state.${s.state}`);
    folder.textContent = s.folder || t('player.nothing');
    const tr = s.index >= 0 && s.queue ? s.queue[s.index] : null;
    replace(track, tr ? `${s.index + 1}/${s.queue.length} · ${tr.title}` : '');
    pos.textContent = tr ? `${fmtTime(s.position)} / ${fmtTime(s.duration)}` : '';
    if (s.cover) { cover.src = s.cover; cover.hidden = false; } else { cover.removeAttribute('src'); cover.hidden = true; }
    if (s.error) err.textContent = s.error;
    if (!dragging) {
      vol.max = s.max_volume;
      vol.value = s.volume;
      volLabel.textContent = t('player.volume', s.volume, s.max_volume);
    }
  }

  const folders = el('select', { id: 'player-folder-select' });
  const playErr = errorBox();
  async function loadFolders() {
    try {
      const lib = await api.get('/api/library');
      replace(folders, ...lib.map((f) => el('option', { value: f.id }, f.relative || f.name)));
    } catch (x) { playErr.textContent = x.message; }
  }

  let timer = 0, stopped = false;
  async function poll() {
    try { show(await api.get('/api/status')); } catch (x) { err.textContent = x.message; }
    if (!stopped) timer = setTimeout(poll, 2000);
  }
  poll();
  loadFolders();

  const btn = (label, action, title) => el('button', { type: 'button', title, 'aria-label': title, onclick: () => command({ action }) }, label);
  return {
    wide: true,
    stop() { stopped = true; clearTimeout(timer); },
    nodes: [
      card(t('player.title'),
        el('div', { class: 'nowplaying' }, cover, el('div', { class: 'stack' }, el('div', {}, state), folder, track, pos)),
        el('div', { class: 'row controls' },
          btn('◀◀', 'previous', t('player.previous')), btn('▶ ❚❚', 'toggle', t('player.toggle')),
          btn('■', 'stop', t('player.stop')), btn('▶▶', 'next', t('player.next'))),
        el('label', {}, volLabel, vol),
        el('p', { class: 'muted small' }, t('player.capnote')),
        err),
      card(t('player.playfolder'),
        el('form', { class: 'stack', onsubmit: (e) => { e.preventDefault(); playErr.textContent = ''; command({ action: 'folder', folder_id: folders.value }); } },
          el('label', {}, t('player.folder'), folders),
          el('button', { type: 'submit', class: 'primary', id: 'player-play-folder' }, t('player.play')), playErr)),
    ],
  };
}
