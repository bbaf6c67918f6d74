// What plays now, the controls and the volume under its cap, live from
// the box's event stream (no polling): the stream begins with the whole
// status and then tells each change. While playing, the position moves
// on here from the time the box read it.
import { el, replace, errorBox, card, fmtTime, fmtClock } from './dom.js';
import { t } from './i18n.js';
import { follow } from './live.js';

export function render({ api }) {
  // err is what a command of this page was told; stateErr why the
  // player itself is in error. Each stays until its own cause changes.
  const err = errorBox(), stateErr = errorBox();
  const cover = el('img', { class: 'cover big', alt: '', hidden: true });
  const state = el('span', { class: 'state', id: 'player-state' });
  const folder = el('strong', { id: 'player-folder' });
  const track = el('div', {});
  const pos = el('div', { class: 'muted small' });
  const vol = el('input', { type: 'range', id: 'player-volume', min: 0, max: 100, step: 1 });
  const volLabel = el('span', { id: 'player-volume-label' });
  const rule = el('div', { class: 'warn small', id: 'player-rule' });
  let dragging = false;

  const command = async (body) => {
    err.textContent = '';
    try { cur = { ...(await api.jsonReq('POST', '/api/command', body)), at: new Date().toISOString() }; show(); } catch (x) { err.textContent = x.message; }
  };
  vol.addEventListener('input', () => { dragging = true; volLabel.textContent = t('player.volume', vol.value, vol.max); });
  vol.addEventListener('change', () => { dragging = false; command({ action: 'volume', value: Number(vol.value) }); });

  // cur is the status as the stream last told it.
  let cur = null;
  const position = (s) => {
    if (s.state !== 'playing' || !s.at) return s.position;
    const p = s.position + (Date.now() - Date.parse(s.at)) / 1000;
    return s.duration ? Math.min(p, s.duration) : p;
  };
  function show() {
    const s = cur;
    if (!s) return;
    state.textContent = t(`state.${s.state}`);
    folder.textContent = s.folder || t('player.nothing');
    const tr = s.index >= 0 && s.queue ? s.queue[s.index] : null;
    replace(track, tr ? `${s.index + 1}/${s.queue.length} · ${tr.title}` : '', s.now_playing ? ` · ${s.now_playing}` : '');
    pos.textContent = tr ? `${fmtTime(position(s))} / ${fmtTime(s.duration)}` : '';
    const r = s.restrictions;
    rule.textContent = r && r.active ? t(`rule.${r.active}`, r.until ? fmtClock(r.until) : '') : '';
    if (s.cover) {
      if (cover.getAttribute('src') !== s.cover) cover.src = s.cover;
      cover.hidden = false;
    } else { cover.removeAttribute('src'); cover.hidden = true; }
    stateErr.textContent = s.state === 'error' && s.error ? s.error : '';
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

  const merge = (d) => { if (cur) { cur = { ...cur, ...d }; show(); } };
  const close = follow({
    status: (d) => { cur = d; show(); },
    queue: merge, track: merge, seek: merge, volume: merge, now_playing: merge,
    state: (d) => merge({ error: undefined, ...d }),
    restrictions: (d) => merge({ restrictions: d }),
    library: loadFolders,
  });
  // The position moves on by itself while playing; no request is made.
  const ticker = setInterval(() => { if (cur && cur.state === 'playing') show(); }, 1000);
  loadFolders();

  const btn = (label, action, title) => el('button', { type: 'button', title, 'aria-label': title, onclick: () => command({ action }) }, label);
  return {
    wide: true,
    stop() { close(); clearInterval(ticker); },
    nodes: [
      card(t('player.title'),
        el('div', { class: 'nowplaying' }, cover, el('div', { class: 'stack' }, el('div', {}, state), folder, track, pos, rule)),
        el('div', { class: 'row controls' },
          btn('◀◀', 'previous', t('player.previous')), btn('▶ ❚❚', 'toggle', t('player.toggle')),
          btn('■', 'stop', t('player.stop')), btn('▶▶', 'next', t('player.next'))),
        el('label', {}, volLabel, vol),
        el('p', { class: 'muted small' }, t('player.capnote')),
        stateErr, err),
      card(t('player.playfolder'),
        el('form', { class: 'stack', onsubmit: (e) => { e.preventDefault(); playErr.textContent = ''; command({ action: 'folder', folder_id: folders.value }); } },
          el('label', {}, t('player.folder'), folders),
          el('button', { type: 'submit', class: 'primary', id: 'player-play-folder' }, t('player.play')), playErr)),
    ],
  };
}
