// The home screen editor: the categories (tabs) of the box's screen and
// their rows, as /api/admin/navigation keeps them. The page edits a copy
// and saves it whole; the box checks all of it, names the wrong field
// (shown next to it) and changes nothing then. Below, what /api/home
// makes of the saved navigation.
import { el, replace, errorBox, okBox, card, fieldBox, fieldError, clearErrors } from './dom.js';
import { t } from './i18n.js';

const providers = ['local-library', 'resume-list', 'radio', 'podcast'];
const langs = ['de', 'en'];

// freeID is prefix-N with the smallest N not taken.
function freeID(prefix, list) {
  const taken = new Set(list.map((x) => x.id));
  let n = 1;
  while (taken.has(`${prefix}-${n}`)) n++;
  return `${prefix}-${n}`;
}

function move(list, i, by) {
  const j = i + by;
  if (j < 0 || j >= list.length) return;
  [list[i], list[j]] = [list[j], list[i]];
}

// label returns the text for the page's language, or any there is.
function label(labels, fallback) {
  const l = labels || {};
  return l[document.documentElement.lang] || l.de || l.en || Object.values(l)[0] || fallback;
}

export function render({ api }) {
  let nav = { version: 1, categories: [] };
  const editor = el('div', { class: 'stack', id: 'home-editor' });
  const err = errorBox(), ok = okBox();
  err.id = 'home-err';
  ok.id = 'home-ok';
  const folders = el('datalist', { id: 'home-folders' });
  const preview = el('ul', { class: 'list', id: 'home-preview' });
  const pErr = errorBox();

  async function load() {
    err.textContent = '';
    try {
      const [n, lib] = await Promise.all([api.get('/api/admin/navigation'), api.get('/api/admin/library/folders')]);
      nav = n;
      nav.categories = nav.categories || [];
      replace(folders, ...lib.folders.filter((f) => f.parent !== null).map((f) => el('option', { value: f.relative })));
      draw();
    } catch (x) { err.textContent = x.message; }
    loadPreview();
  }

  async function loadPreview() {
    pErr.textContent = '';
    try {
      const h = await api.get('/api/home');
      replace(preview, ...h.categories.map((c) => el('li', { dataset: { category: c.id } },
        el('strong', {}, label(c.labels, c.id)),
        el('div', { class: 'muted small' }, c.rows.map((r) => `${label(r.labels, r.id)} (${t('home.items', r.items.length)})`).join(' · ')))));
      if (!h.categories.length) preview.append(el('li', { class: 'muted' }, t('home.empty')));
    } catch (x) { pErr.textContent = x.message; }
  }

  // labelInputs edits the labels of a category or row in place.
  const labelInputs = (obj, cls) => langs.map((l) => el('label', {}, t(`home.label_${l}`),
    el('input', { class: `${cls}-${l}`, value: (obj.labels || {})[l] || '', maxLength: 80,
      oninput: (e) => { obj.labels = { ...(obj.labels || {}), [l]: e.target.value }; } })));

  const tools = (list, i, kind) => el('div', { class: 'row' },
    el('button', { type: 'button', class: 'ghost', title: t('home.up'), 'aria-label': t('home.up'), disabled: i === 0, onclick: () => { move(list, i, -1); draw(); } }, '↑'),
    el('button', { type: 'button', class: 'ghost', title: t('home.down'), 'aria-label': t('home.down'), disabled: i === list.length - 1, onclick: () => { move(list, i, 1); draw(); } }, '↓'),
    el('button', { type: 'button', class: `danger remove-${kind}`, onclick: () => { list.splice(i, 1); draw(); } }, t('home.remove')));

  function sourceField(r, at) {
    if (r.provider === 'local-library') {
      return el('label', {}, t('home.folder'),
        el('input', { class: 'row-source', list: 'home-folders', value: r.source_ref || '', placeholder: t('home.whole_library'),
          oninput: (e) => { r.source_ref = e.target.value.trim(); } }), fieldBox(`${at}.source_ref`));
    }
    if (r.provider === 'resume-list') {
      return el('label', {}, t('home.resume_size'),
        el('input', { class: 'row-source', type: 'number', inputMode: 'numeric', value: r.source_ref || '', placeholder: '10',
          oninput: (e) => { r.source_ref = e.target.value.trim(); } }), fieldBox(`${at}.source_ref`));
    }
    return el('p', { class: 'muted small' }, t(`home.${r.provider}_help`));
  }

  function rowView(cat, ci, r, ri) {
    const at = `categories[${ci}].rows[${ri}]`;
    const prov = el('select', { class: 'row-provider' }, ...providers.map((p) => el('option', { value: p }, t(`home.provider.${p}`))));
    prov.value = r.provider;
    prov.addEventListener('change', () => { r.provider = prov.value; r.source_ref = ''; draw(); });
    return el('li', { dataset: { row: ri } },
      el('div', { class: 'grid2' }, ...labelInputs(r, 'row-label'), el('label', {}, t('home.provider'), prov), sourceField(r, at)),
      el('div', { class: 'row' }, el('span', { class: 'muted small mono grow' }, r.id), tools(cat.rows, ri, 'row')),
      fieldBox(at));
  }

  function catView(cat, ci) {
    const at = `categories[${ci}]`;
    cat.rows = cat.rows || [];
    return el('fieldset', { class: 'cat', dataset: { cat: ci } },
      el('legend', {}, t('home.category', ci + 1)),
      el('div', { class: 'grid2' }, ...labelInputs(cat, 'cat-label')),
      el('div', { class: 'row' }, el('span', { class: 'muted small mono grow' }, cat.id), tools(nav.categories, ci, 'cat')),
      fieldBox(at),
      el('h3', {}, t('home.rows')),
      el('ul', { class: 'list' }, ...cat.rows.map((r, ri) => rowView(cat, ci, r, ri)),
        cat.rows.length ? null : el('li', { class: 'muted' }, t('home.no_rows'))),
      el('button', { type: 'button', class: 'add-row', onclick: () => {
        cat.rows.push({ id: freeID('row', cat.rows), labels: {}, provider: 'local-library', source_ref: '' });
        draw();
      } }, t('home.add_row')));
  }

  function draw() {
    replace(editor, ...nav.categories.map(catView),
      nav.categories.length ? null : el('p', { class: 'muted' }, t('home.no_categories')));
  }

  // clean drops labels left empty, so a category named in one language
  // only is shown in that one.
  const clean = (labels) => Object.fromEntries(Object.entries(labels || {}).filter(([, v]) => v.trim() !== '').map(([k, v]) => [k, v.trim()]));

  const form = el('form', { class: 'stack', id: 'home-form', onsubmit: async (e) => {
    e.preventDefault();
    clearErrors(form);
    ok.textContent = '';
    const body = {
      version: nav.version || 1,
      categories: nav.categories.map((c) => ({
        id: c.id, labels: clean(c.labels),
        rows: (c.rows || []).map((r) => ({ id: r.id, labels: clean(r.labels), provider: r.provider, source_ref: r.source_ref || '' })),
      })),
    };
    try {
      nav = await api.jsonReq('PUT', '/api/admin/navigation', body);
      draw();
      ok.textContent = t('saved');
      loadPreview();
    } catch (x) { fieldError(form, err, x); }
  } }, editor,
  el('div', { class: 'row' }, el('button', { type: 'button', id: 'home-add-cat', onclick: () => {
    nav.categories.push({ id: freeID('category', nav.categories), labels: {}, rows: [] });
    draw();
  } }, t('home.add_category'))),
  err, ok,
  el('div', { class: 'row' }, el('button', { type: 'submit', class: 'primary', id: 'home-save' }, t('save')),
    el('button', { type: 'button', id: 'home-reload', onclick: load }, t('home.reload'))));

  load();
  return {
    nodes: [
      card(t('home.title'), el('p', { class: 'muted' }, t('home.help')), folders, form),
      card(t('home.preview'), el('p', { class: 'muted small' }, t('home.preview_help')), pErr, preview),
    ],
  };
}
