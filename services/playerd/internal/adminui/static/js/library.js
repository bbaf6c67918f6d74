// The library: folders with covers, new folder, rename, delete, cover
// upload, rescan, the loudness measurement's progress, and uploads of many files with a bar per file and one in
// total. Files go one request each, so one refused file (not audio) is
// named and the others still arrive.
import { el, replace, errorBox, okBox, card, fmtBytes, confirmButton } from './dom.js';
import { t } from './i18n.js';

export function render({ api }) {
  const listErr = errorBox();
  const list = el('ul', { class: 'list', id: 'library-list' });
  const parentSel = el('select', { id: 'newfolder-parent' });
  const targetSel = el('select', { id: 'upload-folder' });
  let folders = [];

  async function load() {
    listErr.textContent = '';
    try {
      folders = (await api.get('/api/admin/library/folders')).folders;
    } catch (x) { listErr.textContent = x.message; return; }
    const label = (f) => (f.parent === null ? t('library.root') : f.relative);
    for (const sel of [parentSel, targetSel]) {
      const keep = sel.value;
      replace(sel, ...folders.map((f) => el('option', { value: f.id }, label(f))));
      if (folders.some((f) => f.id === keep)) sel.value = keep;
    }
    replace(list, ...folders.filter((f) => f.parent !== null).map(row));
    if (folders.length <= 1) list.append(el('li', { class: 'muted' }, t('library.empty')));
  }

  function row(f) {
    const err = errorBox();
    const img = f.cover ? el('img', { class: 'cover', src: `${f.cover}?v=${Date.now()}`, alt: '' }) : el('div', { class: 'cover' });
    const name = el('input', { value: f.name, 'aria-label': t('library.newname') });
    const rename = el('form', { class: 'row', hidden: true, onsubmit: async (e) => {
      e.preventDefault();
      err.textContent = '';
      try { await api.jsonReq('PATCH', `/api/admin/library/folders/${f.id}`, { name: name.value }); await load(); } catch (x) { err.textContent = x.message; }
    } }, name, el('button', { type: 'submit', class: 'primary' }, t('library.rename')));
    const coverIn = el('input', { type: 'file', accept: 'image/jpeg,image/png', hidden: true, onchange: async () => {
      const file = coverIn.files[0];
      if (!file) return;
      err.textContent = '';
      try { await api.rawReq('PUT', `/api/admin/library/folders/${f.id}/cover`, file, file.type || 'application/octet-stream'); await load(); } catch (x) { err.textContent = x.message; }
    } });
    return el('li', { dataset: { folder: f.relative } },
      el('div', { class: 'folder' }, img, el('div', {}, el('strong', {}, f.relative), el('div', { class: 'muted small' }, t('library.tracks', f.tracks)))),
      el('div', { class: 'row' },
        el('button', { type: 'button', onclick: () => { rename.hidden = !rename.hidden; } }, t('library.rename')),
        el('button', { type: 'button', onclick: () => coverIn.click() }, t('library.cover')), coverIn,
        confirmButton(t('library.delete'), t('library.delete_confirm'), async () => {
          err.textContent = '';
          try { await api.jsonReq('DELETE', `/api/admin/library/folders/${f.id}`, {}); await load(); } catch (x) { err.textContent = x.message; }
        })),
      rename, err);
  }

  // New folder.
  const nfErr = errorBox();
  const nfName = el('input', { id: 'newfolder-name', required: true, maxLength: 200 });
  const newFolder = el('form', { id: 'newfolder-form', class: 'stack', onsubmit: async (e) => {
    e.preventDefault();
    nfErr.textContent = '';
    try {
      const f = await api.jsonReq('POST', '/api/admin/library/folders', { name: nfName.value, parent: parentSel.value });
      nfName.value = '';
      await load();
      targetSel.value = f.id;
    } catch (x) { nfErr.textContent = x.message; }
  } }, el('label', {}, t('library.name'), nfName), el('label', {}, t('library.parent'), parentSel), nfErr,
  el('button', { type: 'submit', class: 'primary', id: 'newfolder-submit' }, t('library.create')));

  // Upload.
  const upErr = errorBox(), upOk = okBox();
  const files = el('input', { type: 'file', id: 'upload-files', multiple: true, accept: 'audio/*,.mp3,.flac,.ogg,.opus,.wav,.m4a,.m4b,.aac' });
  const totalBar = el('progress', { id: 'upload-total', max: 1, value: 0, hidden: true });
  const perFile = el('ul', { class: 'list', id: 'upload-list' });
  const go = el('button', { type: 'submit', class: 'primary', id: 'upload-submit' }, t('library.upload'));
  const uploadForm = el('form', { class: 'stack', id: 'upload-form', onsubmit: async (e) => {
    e.preventDefault();
    upErr.textContent = ''; upOk.textContent = '';
    const chosen = [...files.files];
    if (!chosen.length) { upErr.textContent = t('library.choose'); return; }
    const target = targetSel.value;
    const total = chosen.reduce((n, f) => n + f.size, 0) || 1;
    let done = 0, good = 0, bad = 0;
    totalBar.hidden = false; totalBar.max = total; totalBar.value = 0;
    go.disabled = true;
    const rows = chosen.map((f) => {
      const bar = el('progress', { max: f.size || 1, value: 0 });
      const msg = el('span', { class: 'small' });
      const li = el('li', { dataset: { file: f.name } }, el('div', { class: 'row' }, el('strong', {}, f.name), el('span', { class: 'muted small' }, fmtBytes(f.size))), bar, msg);
      return { f, bar, msg, li };
    });
    replace(perFile, ...rows.map((r) => r.li));
    for (const r of rows) {
      const form = new FormData();
      form.append('file', r.f, r.f.name);
      try {
        await api.upload(`/api/admin/library/folders/${target}/files`, form, (loaded, tot) => {
          const part = r.f.size * Math.min(1, loaded / tot);
          r.bar.value = part;
          totalBar.value = done + part;
        });
        r.bar.value = r.bar.max;
        r.msg.className = 'okmsg small'; r.msg.textContent = t('library.uploaded');
        r.li.dataset.state = 'ok';
        good++;
      } catch (x) {
        r.msg.className = 'err small'; r.msg.textContent = x.message;
        r.li.dataset.state = 'refused';
        bad++;
      }
      done += r.f.size;
      totalBar.value = done;
    }
    go.disabled = false;
    files.value = '';
    upOk.textContent = t('library.upload_done', good);
    if (bad) upErr.textContent = t('library.upload_bad', bad);
    await load();
  } }, el('label', {}, t('library.target'), targetSel), el('label', {}, t('library.files'), files), go,
  el('label', {}, t('library.total'), totalBar), perFile, upErr, upOk);

  const rsErr = errorBox(), rsOk = okBox();
  const rescan = el('button', { type: 'button', id: 'library-rescan', onclick: async () => {
    rsErr.textContent = ''; rsOk.textContent = '';
    try { const r = await api.jsonReq('POST', '/api/admin/library/rescan', {}); rsOk.textContent = t('library.rescanned', r.folders, r.tracks); await load(); } catch (x) { rsErr.textContent = x.message; }
  } }, t('library.rescan'));

  // "Measured N of M": the background loudness measurement, followed
  // while the page shows it.
  const loud = el('p', { class: 'muted small', id: 'library-loudness' });
  async function loadLoudness() {
    try {
      const p = await api.get('/api/admin/loudness');
      loud.textContent = t('library.loudness', p.measured, p.total) + (p.failed ? ' ' + t('library.loudness_failed', p.failed) : '');
    } catch (x) { loud.textContent = ''; }
  }
  const poll = setInterval(() => { if (loud.isConnected) loadLoudness(); else clearInterval(poll); }, 5000);

  load();
  loadLoudness();
  return {
    wide: true,
    nodes: [
      el('div', { class: 'stack' }, card(t('library.upload_title'), uploadForm), card(t('library.new'), newFolder)),
      card(t('nav.library'), el('div', { class: 'row' }, rescan), loud, rsErr, rsOk, listErr, list),
    ],
  };
}
