// Card readers and buttons (/api/admin/input): the devices the box sees
// now and what it made of them, and the wiring: which devices are card
// readers, the media keys, and the GPIO buttons with their actions. The
// wiring is saved whole and applied at once; the box names a wrong field.
import { el, replace, errorBox, okBox, card, fieldBox, fieldError, clearErrors, fmtClock } from './dom.js';
import { t } from './i18n.js';

const actions = ['toggle', 'play', 'pause', 'stop', 'next', 'previous', 'volume_up', 'volume_down', 'shuffle', 'repeat', 'seek_back', 'seek_forward', 'calm'];
const longActions = [...actions, 'power_off'];
const biases = ['pull-up', 'pull-down', 'disabled'];
const hex4 = /^[0-9a-f]{4}$/i;

// An emptied line field is sent as a line the box refuses, so it says
// which button lacks one instead of taking line 0.
const lineOf = (v) => (v.trim() === '' ? -1 : Number(v));

const num = (attrs) => el('input', { type: 'number', step: 1, inputMode: 'numeric', ...attrs });

export function render({ api }) {
  let wiring = null;
  const devices = el('ul', { class: 'list', id: 'input-devices' });
  const gpioState = el('dl', { class: 'kv', id: 'gpio-status' });
  const dErr = errorBox();
  const readers = el('ul', { class: 'list', id: 'input-readers' });
  const buttons = el('ul', { class: 'list', id: 'input-buttons' });
  const err = errorBox(), ok = okBox();
  err.id = 'input-err';
  ok.id = 'input-ok';

  const f = {
    media_keys: el('input', { type: 'checkbox', id: 'input-media-keys' }),
    volume_step: num({ id: 'input-volume-step', min: 1, max: 25 }),
    long_press_ms: num({ id: 'input-long-press', min: 500, max: 10000 }),
    chip: el('input', { id: 'input-gpio-chip', autocomplete: 'off' }),
    active_low: el('input', { type: 'checkbox', id: 'input-active-low' }),
    bias: el('select', { id: 'input-bias' }, ...biases.map((b) => el('option', { value: b }, t(`input.bias.${b}`)))),
    debounce_ms: num({ id: 'input-debounce', min: 0, max: 1000 }),
    jack: el('input', { type: 'checkbox', id: 'input-jack' }),
    jack_line: num({ id: 'input-jack-line', min: 0, max: 511 }),
    jack_inverted: el('input', { type: 'checkbox', id: 'input-jack-inverted' }),
  };

  function showStatus(s) {
    replace(devices, ...s.devices.map((d) => {
      const usb = hex4.test(d.vendor || '') && hex4.test(d.product || '');
      const isReader = d.role === 'reader';
      return el('li', { dataset: { device: d.path, role: d.role } },
        el('div', { class: 'row' }, el('strong', { class: 'grow' }, d.name || d.path), el('span', { class: 'state' }, t(`input.role.${d.role}`))),
        el('div', { class: 'muted small mono' }, d.path, usb ? ` · ${d.vendor}:${d.product}` : ''),
        el('div', { class: 'muted small' }, t('input.since', fmtClock(d.since))),
        // A device the box took for a keyboard can be made a reader: its
        // USB id (or its name) goes into the wiring's readers.
        isReader || !wiring ? null : el('button', { type: 'button', class: 'make-reader', onclick: () => {
          wiring.readers.push(usb ? { vendor: d.vendor, product: d.product } : { name: d.name });
          drawReaders();
          ok.textContent = t('input.reader_added');
        } }, t('input.make_reader')));
    }));
    if (!s.devices.length) devices.append(el('li', { class: 'muted' }, t('input.no_devices')));
    const g = s.gpio || {};
    replace(gpioState,
      el('dt', {}, t('input.gpio')), el('dd', { id: 'gpio-state', class: g.state === 'error' ? 'err' : '' }, t(`input.gpio.${g.state || 'off'}`)),
      g.chip ? [el('dt', {}, t('input.chip')), el('dd', { class: 'mono' }, g.chip)] : null,
      (g.lines || []).length ? [el('dt', {}, t('input.lines')), el('dd', {}, g.lines.join(', '))] : null,
      g.error ? [el('dt', {}, t('input.problem')), el('dd', { class: 'err' }, g.error)] : null);
  }

  function drawReaders() {
    replace(readers, ...wiring.readers.map((m, i) => el('li', { dataset: { reader: i } },
      el('div', { class: 'grid3' },
        el('label', {}, t('input.reader_name'), el('input', { class: 'reader-name', value: m.name || '', maxLength: 80, oninput: (e) => { m.name = e.target.value; } })),
        el('label', {}, t('input.vendor'), el('input', { class: 'reader-vendor mono', value: m.vendor || '', maxLength: 4, placeholder: 'ffff', oninput: (e) => { m.vendor = e.target.value.trim().toLowerCase(); } })),
        el('label', {}, t('input.product'), el('input', { class: 'reader-product mono', value: m.product || '', maxLength: 4, placeholder: '0035', oninput: (e) => { m.product = e.target.value.trim().toLowerCase(); } })),
        el('div', { class: 'end' }, el('button', { type: 'button', class: 'danger', onclick: () => { wiring.readers.splice(i, 1); drawReaders(); } }, t('input.remove')))),
      fieldBox(`readers[${i}]`))));
    if (!wiring.readers.length) readers.append(el('li', { class: 'muted' }, t('input.no_readers')));
  }

  const select = (cls, list, value, empty, set) => {
    const s = el('select', { class: cls, onchange: (e) => set(e.target.value) },
      el('option', { value: '' }, empty), ...list.map((a) => el('option', { value: a }, t(`input.action.${a}`))));
    s.value = value || '';
    return s;
  };

  function drawButtons() {
    const list = wiring.gpio.buttons;
    replace(buttons, ...list.map((b, i) => el('li', { dataset: { button: i } },
      el('div', { class: 'grid3' },
        el('label', {}, t('input.line'), num({ class: 'button-line', min: 0, max: 511, value: String(b.line), oninput: (e) => { b.line = lineOf(e.target.value); } })),
        el('label', {}, t('input.short'), select('button-action', actions, b.action, t('input.nothing'), (v) => { b.action = v; })),
        el('label', {}, t('input.long'), select('button-long', longActions, b.long_action, t('input.nothing'), (v) => { b.long_action = v; })),
        el('div', { class: 'end' }, el('button', { type: 'button', class: 'danger', onclick: () => { list.splice(i, 1); drawButtons(); } }, t('input.remove')))),
      fieldBox(`gpio.buttons[${i}]`))));
    if (!list.length) buttons.append(el('li', { class: 'muted' }, t('input.no_buttons')));
  }

  function fill(v) {
    wiring = v.wiring;
    wiring.readers = wiring.readers || [];
    wiring.gpio.buttons = wiring.gpio.buttons || [];
    f.media_keys.checked = wiring.media_keys;
    f.volume_step.value = wiring.volume_step;
    f.long_press_ms.value = wiring.long_press_ms;
    f.chip.value = wiring.gpio.chip;
    f.active_low.checked = wiring.gpio.active_low;
    f.bias.value = wiring.gpio.bias;
    f.debounce_ms.value = wiring.gpio.debounce_ms;
    const j = wiring.gpio.jack;
    f.jack.checked = !!j;
    f.jack_line.value = j ? j.line : '';
    f.jack_inverted.checked = !!(j && j.inverted);
    drawReaders();
    drawButtons();
    showStatus(v.status);
  }

  async function load() {
    dErr.textContent = '';
    try { fill(await api.get('/api/admin/input')); } catch (x) { dErr.textContent = x.message; }
  }

  // refresh reads the devices anew and keeps the wiring being edited.
  async function refresh() {
    dErr.textContent = '';
    try { showStatus((await api.get('/api/admin/input')).status); } catch (x) { dErr.textContent = x.message; }
  }

  const form = el('form', { class: 'stack', id: 'input-form', noValidate: true, onsubmit: async (e) => {
    e.preventDefault();
    if (!wiring) return;
    clearErrors(form);
    ok.textContent = '';
    const clean = (m) => Object.fromEntries(Object.entries(m).filter(([, v]) => v !== '' && v !== undefined));
    const body = {
      readers: wiring.readers.map(clean),
      media_keys: f.media_keys.checked,
      volume_step: Number(f.volume_step.value),
      long_press_ms: Number(f.long_press_ms.value),
      gpio: {
        chip: f.chip.value.trim(), active_low: f.active_low.checked, bias: f.bias.value, debounce_ms: Number(f.debounce_ms.value),
        buttons: wiring.gpio.buttons.map((b) => clean({ line: b.line, action: b.action, long_action: b.long_action })),
        jack: f.jack.checked ? { line: lineOf(f.jack_line.value), inverted: f.jack_inverted.checked } : null,
      },
    };
    try {
      fill(await api.jsonReq('PUT', '/api/admin/input', body));
      ok.textContent = t('saved');
    } catch (x) { fieldError(form, err, x); }
  } },
  el('h3', {}, t('input.readers')), el('p', { class: 'muted small' }, t('input.readers_help')), readers,
  el('div', { class: 'row' }, el('button', { type: 'button', id: 'input-add-reader', onclick: () => { wiring.readers.push({ name: '' }); drawReaders(); } }, t('input.add_reader'))),
  el('h3', {}, t('input.keys')),
  el('label', { class: 'check' }, f.media_keys, t('input.media_keys')),
  el('div', { class: 'grid2' },
    el('label', {}, t('input.volume_step'), f.volume_step, fieldBox('volume_step')),
    el('label', {}, t('input.long_press'), f.long_press_ms, fieldBox('long_press_ms'))),
  el('h3', {}, t('input.buttons')), el('p', { class: 'muted small' }, t('input.buttons_help')), buttons,
  el('div', { class: 'row' }, el('button', { type: 'button', id: 'input-add-button', onclick: () => {
    const used = new Set(wiring.gpio.buttons.map((b) => b.line));
    let line = 17;
    while (used.has(line)) line++;
    wiring.gpio.buttons.push({ line, action: 'toggle', long_action: '' });
    drawButtons();
  } }, t('input.add_button'))),
  el('div', { class: 'grid2' },
    el('label', {}, t('input.chip'), f.chip, fieldBox('gpio.chip')),
    el('label', {}, t('input.bias'), f.bias, fieldBox('gpio.bias')),
    el('label', {}, t('input.debounce'), f.debounce_ms, fieldBox('gpio.debounce_ms')),
    el('label', { class: 'check' }, f.active_low, t('input.active_low'))),
  el('h3', {}, t('input.jack')), el('p', { class: 'muted small' }, t('input.jack_help')),
  el('div', { class: 'grid2' },
    el('label', { class: 'check' }, f.jack, t('input.jack_wired')),
    el('label', {}, t('input.jack_line'), f.jack_line, fieldBox('gpio.jack')),
    el('label', { class: 'check' }, f.jack_inverted, t('input.jack_inverted'))),
  err, ok,
  el('button', { type: 'submit', class: 'primary', id: 'input-save' }, t('save')));

  load();
  return {
    wide: true,
    nodes: [
      el('div', { class: 'stack' },
        card(t('input.devices'), el('p', { class: 'muted small' }, t('input.devices_help')), dErr, devices,
          el('div', { class: 'row' }, el('button', { type: 'button', id: 'input-refresh', onclick: refresh }, t('input.refresh'))), gpioState)),
      card(t('input.title'), form),
    ],
  };
}
