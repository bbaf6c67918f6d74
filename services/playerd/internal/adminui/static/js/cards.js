// Cards: teach mode (the next card read is shown, not acted on), mapping a
// card to a folder, station or command, the known cards, the unknown ones,
// the last reads with what came of them, and how a card acts.
import { el, replace, errorBox, okBox, card, confirmButton } from './dom.js';
import { t } from './i18n.js';

const actions = ['folder', 'resume', 'radio', 'toggle', 'pause', 'stop', 'next', 'previous', 'sleep_timer', 'volume_delta',
  'seek_delta', 'shuffle', 'repeat', 'calm'];
const withFolder = new Set(['folder', 'resume', 'radio']);
const withValue = new Set(['sleep_timer', 'volume_delta', 'seek_delta']);
// Actions whose value is a choice, not a number: on/off, or repeat's word.
const choices = { shuffle: [true, false], calm: [true, false], repeat: ['off', 'folder', 'track'] };
const modes = ['normal', 'repeat', 'repeat_one', 'shuffle', 'single', 'random_one'];
const sameCards = ['continue', 'toggle_pause', 'restart', 'next'];

export function render({ api }) {
  let stopped = false;
  let library = [];
  const listErr = errorBox();
  const known = el('ul', { class: 'list', id: 'cards-list' });
  const unknown = el('ul', { class: 'list', id: 'cards-unknown' });
  const assign = el('div', { class: 'stack', id: 'card-assign' });
  const reads = el('ul', { class: 'list', id: 'cards-reads' });
  const readsErr = errorBox();
  const optErr = errorBox(), optOk = okBox();
  const sameCard = el('select', { id: 'cards-same' }, ...sameCards.map((v) => el('option', { value: v }, t(`cards.same.${v}`))));
  const sounds = el('input', { type: 'checkbox', id: 'cards-sounds' });

  const folderName = (id) => (library.find((f) => f.id === id) || {}).relative || id;

  async function load() {
    listErr.textContent = '';
    try {
      const [doc, unk, lib] = await Promise.all([api.get('/api/admin/cards'), api.get('/api/admin/cards/unknown'), api.get('/api/library')]);
      library = lib;
      sameCard.value = doc.same_card;
      sounds.checked = doc.sounds;
      const ids = Object.keys(doc.cards || {}).sort();
      replace(known, ...ids.map((id) => {
        const m = doc.cards[id];
        const e = errorBox();
        return el('li', {}, el('div', {}, el('strong', {}, m.name || id), ' ', el('span', { class: 'mono small' }, id)),
          el('div', { class: 'muted small' }, t(`card.${m.action}`), m.folder_id ? ` · ${folderName(m.folder_id)}` : '', m.value !== undefined ? ` · ${choices[m.action] ? t(`cards.choice.${m.value}`) : m.value}` : '',
            m.mode ? ` · ${t(`cards.modes.${m.mode}`)}` : '',
            m.same_card ? ` · ${t('cards.same')}: ${t(`cards.same.${m.same_card}`)}` : ''),
          el('div', { class: 'row' }, el('button', { type: 'button', onclick: () => editor(id, m) }, t('cards.edit')),
            confirmButton(t('cards.delete'), t('cards.delete_confirm'), async () => {
              try { await api.jsonReq('DELETE', `/api/admin/cards/${id}`, {}); await load(); } catch (x) { e.textContent = x.message; }
            })), e);
      }));
      if (!ids.length) known.append(el('li', { class: 'muted' }, t('cards.none')));
      replace(unknown, ...(unk || []).map((u) => {
        const e = errorBox();
        return el('li', {}, el('div', { class: 'mono' }, u.id),
          el('div', { class: 'muted small' }, t('cards.seen', u.count, new Date(u.last_seen).toLocaleString())),
          el('div', { class: 'row' }, el('button', { type: 'button', onclick: () => editor(u.id, null) }, t('cards.assign')),
            el('button', { type: 'button', onclick: async () => {
              try { await api.jsonReq('DELETE', `/api/admin/cards/unknown/${u.id}`, {}); await load(); } catch (x) { e.textContent = x.message; }
            } }, t('cards.forget'))), e);
      }));
      if (!(unk || []).length) unknown.append(el('li', { class: 'muted' }, t('cards.no_unknown')));
    } catch (x) { listErr.textContent = x.message; }
    await loadReads();
  }

  // The last reads, newest first, and what the box made of each.
  async function loadReads() {
    readsErr.textContent = '';
    try {
      const r = await api.get('/api/admin/cards/reads');
      replace(reads, ...r.map((x) => el('li', { dataset: { outcome: x.outcome } },
        el('div', { class: 'row' }, el('span', { class: 'mono grow' }, x.id), el('span', { class: 'state' }, t(`cards.outcome.${x.outcome}`))),
        el('div', { class: 'muted small' }, new Date(x.at).toLocaleString(), x.action ? ` · ${t(`card.${x.action}`)}` : '',
          x.folder_id ? ` · ${folderName(x.folder_id)}` : ''),
        x.error ? el('div', { class: 'err small' }, x.error) : null)));
      if (!r.length) reads.append(el('li', { class: 'muted' }, t('cards.no_reads')));
    } catch (x) { readsErr.textContent = x.message; }
  }

  const options = el('form', { class: 'stack', id: 'cards-options', onsubmit: async (e) => {
    e.preventDefault();
    optErr.textContent = ''; optOk.textContent = '';
    try {
      const d = await api.jsonReq('PUT', '/api/admin/cards', { same_card: sameCard.value, sounds: sounds.checked });
      sameCard.value = d.same_card;
      sounds.checked = d.sounds;
      optOk.textContent = t('saved');
    } catch (x) { optErr.textContent = x.message; }
  } }, el('label', {}, t('cards.same'), sameCard), el('label', { class: 'check' }, sounds, t('cards.sounds')), optErr, optOk,
  el('button', { type: 'submit', id: 'cards-options-save' }, t('save')));

  // editor shows the form that maps card id.
  function editor(id, m) {
    const err = errorBox();
    const act = el('select', { id: 'card-action' }, ...actions.map((a) => el('option', { value: a }, t(`card.${a}`))));
    const folder = el('select', { id: 'card-folder' });
    // A station card names a station, the others a folder of files or a
    // podcast.
    const folders = () => {
      const keep = folder.value;
      const radio = act.value === 'radio';
      replace(folder, ...library.filter((f) => (f.kind === 'radio') === radio).map((f) => el('option', { value: f.id }, f.relative || f.name)));
      if ([...folder.options].some((o) => o.value === keep)) folder.value = keep;
    };
    const value = el('input', { type: 'number', id: 'card-value', min: -600, max: 600 });
    const choice = el('select', { id: 'card-choice' });
    const choices_ = () => {
      const keep = choice.value;
      replace(choice, ...(choices[act.value] || []).map((v) => el('option', { value: String(v) }, t(`cards.choice.${v}`))));
      if ([...choice.options].some((o) => o.value === keep)) choice.value = keep;
    };
    // A folder card's play mode; '' keeps the folder's own.
    const mode = el('select', { id: 'card-mode' }, el('option', { value: '' }, t('cards.mode.folder')),
      ...modes.map((v) => el('option', { value: v }, t(`cards.modes.${v}`))));
    const name = el('input', { id: 'card-name', maxLength: 80 });
    // The second tap of this card; '' keeps the choice for every card.
    const same = el('select', { id: 'card-same' }, el('option', { value: '' }, t('cards.same.all')),
      ...sameCards.map((v) => el('option', { value: v }, t(`cards.same.${v}`))));
    const fLab = el('label', {}, t('cards.folder'), folder), vLab = el('label', {}, t('cards.value'), value);
    const sLab = el('label', {}, t('cards.same'), same);
    const cLab = el('label', {}, t('cards.choice'), choice), mLab = el('label', {}, t('cards.mode'), mode);
    const sync = () => {
      fLab.hidden = sLab.hidden = !withFolder.has(act.value); vLab.hidden = !withValue.has(act.value);
      cLab.hidden = !choices[act.value]; mLab.hidden = act.value !== 'folder';
      folders(); choices_();
    };
    act.addEventListener('change', sync);
    if (m) { act.value = m.action; folders(); if (m.folder_id) folder.value = m.folder_id; if (typeof m.value === 'number') value.value = m.value; name.value = m.name || ''; same.value = m.same_card || ''; mode.value = m.mode || ''; choices_(); if (choices[m.action]) choice.value = String(m.value); }
    sync();
    replace(assign, el('form', { class: 'stack', onsubmit: async (e) => {
      e.preventDefault();
      err.textContent = '';
      const body = { action: act.value };
      if (withFolder.has(act.value)) body.folder_id = folder.value;
      if (withFolder.has(act.value) && same.value) body.same_card = same.value;
      if (act.value === 'folder' && mode.value) body.mode = mode.value;
      if (act.value === 'repeat') body.value = choice.value;
      else if (choices[act.value]) body.value = choice.value === 'true';
      if (withValue.has(act.value) && value.value !== '') body.value = Number(value.value);
      if (name.value.trim()) body.name = name.value.trim();
      try { await api.jsonReq('PUT', `/api/admin/cards/${id}`, body); replace(assign); await load(); } catch (x) { err.textContent = x.message; }
    } }, el('h3', {}, t('cards.card'), ' ', el('span', { class: 'mono' }, id)),
    el('label', {}, t('cards.name'), name), el('label', {}, t('cards.action'), act), fLab, mLab, sLab, vLab, cLab, err,
    el('div', { class: 'row' }, el('button', { type: 'submit', class: 'primary' }, t('save')),
      el('button', { type: 'button', onclick: () => replace(assign) }, t('cancel')))));
  }

  // Teach mode: start it, then wait on the box (long poll) for the card.
  const learnErr = errorBox();
  const learnState = el('p', { id: 'learn-state', role: 'status' });
  const learnBtn = el('button', { type: 'button', class: 'primary', id: 'learn-start' }, t('cards.learn'));
  const cancelBtn = el('button', { type: 'button', id: 'learn-stop', hidden: true }, t('cancel'));
  learnBtn.addEventListener('click', async () => {
    learnErr.textContent = '';
    try {
      await api.jsonReq('POST', '/api/admin/cards/learn', { timeout_seconds: 60 });
    } catch (x) { learnErr.textContent = x.message; return; }
    learnBtn.hidden = true; cancelBtn.hidden = false;
    learnState.textContent = t('cards.waiting');
    while (!stopped) {
      let r;
      try { r = await api.get('/api/admin/cards/learn?wait=20'); } catch (x) { learnErr.textContent = x.message; break; }
      if (r.state === 'seen' && r.card) {
        learnState.textContent = t('cards.seen_now', r.card.id);
        loadReads();
        editor(r.card.id, r.card.mapping || null);
        break;
      }
      if (r.state !== 'waiting') { learnState.textContent = t('cards.expired'); break; }
    }
    learnBtn.hidden = false; cancelBtn.hidden = true;
  });
  cancelBtn.addEventListener('click', async () => {
    try { await api.jsonReq('DELETE', '/api/admin/cards/learn', {}); learnState.textContent = ''; } catch (x) { learnErr.textContent = x.message; }
  });

  load();
  return {
    wide: true,
    stop() { stopped = true; },
    nodes: [
      el('div', { class: 'stack' }, card(t('cards.teach'), el('p', { class: 'muted' }, t('cards.teach_help')), el('div', { class: 'row' }, learnBtn, cancelBtn), learnState, learnErr, assign),
        card(t('cards.unknown'), unknown), card(t('cards.options'), options)),
      el('div', { class: 'stack' }, card(t('cards.known'), listErr, known),
        card(t('cards.reads'), el('div', { class: 'row' }, el('button', { type: 'button', id: 'cards-reads-refresh', onclick: loadReads }, t('cards.refresh'))), readsErr, reads)),
    ],
  };
}
