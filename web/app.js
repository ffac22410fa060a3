// app.js - the page: form and address <-> the CLI's arguments, the WebAssembly CLI called with
// them, its JSON and its SVG shown.  The page never builds JSON or figures of its own: what it
// shows is what `trainplan VERB ... --format json --svg FILE` prints and writes.
'use strict';

const form = document.getElementById('form');
const statusLine = document.getElementById('status');
let core = null;
let stdout = [];
let stderr = [];

// Runs the CLI with `args`; returns its exit status and output.
function run(args) {
  stdout = [];
  stderr = [];
  let code;
  try {
    code = core.callMain(args);
  } catch (e) {
    code = e && typeof e.status === 'number' ? e.status : 2;
    stderr.push(String(e));
  }
  return { code: code, out: stdout.length ? stdout.join('\n') + '\n' : '', err: stderr.join('\n') };
}

// The page's verbs and each verb's options, from the WebAssembly build (web/main_web.c: the
// library's one option table); filled once the core is loaded.
let verbs = [];
const schema = {};

function verbInfo(verb) {
  return verbs.find((v) => v.name === verb) || { name: verb, model: true };
}

// The verb's options by name (its aliases too), from `trainplan options VERB`.
function optionsOf(verb) {
  if (!schema[verb]) {
    const r = run(['options', verb]);
    const byName = {};
    if (r.code === 0) {
      for (const o of JSON.parse(r.out)) {
        byName[o.name] = o;
        for (const a of o.aliases ? o.aliases.split('|') : []) byName[a] = o;
      }
    }
    schema[verb] = byName;
  }
  return schema[verb];
}

// The CLI's arguments for the page's inputs: verb, MODEL (for the verbs that take one), then
// --NAME VALUE for every input the verb takes (an input of the form that the verb does not
// take is left out; a key of the address is always passed on, so the CLI says what is wrong
// with it, "did you mean" included), then --format json and --svg.
function cliArgs(params) {
  const verb = params.get('verb') || 'estimate';
  const opts = optionsOf(verb);
  const args = [verb];
  if (verbInfo(verb).model) args.push(params.get('model') || 'llama-3.1-8b');
  for (const [k, v] of params) {
    if (k === 'verb' || k === 'model') continue;
    if (form.elements.namedItem(k) && !opts[k]) continue;
    if (v === '') args.push('--' + k);
    else args.push('--' + k, v);
  }
  args.push('--format', 'json');
  const gpus = params.get('gpus') || '';
  const sweep = gpus.includes('..') || gpus.includes(',');
  if (opts.svg && (verb !== 'search' || sweep)) args.push('--svg', '/plot.svg');
  return args;
}

function paramsFromForm() {
  const p = new URLSearchParams();
  for (const el of form.elements) {
    if (!el.name) continue;
    const v = el.value.trim();
    if (v !== '' || el.name === 'verb' || el.name === 'model') p.set(el.name, v);
  }
  return p;
}

// The form's inputs and, after them, the address's keys the form has no input for (any CLI
// option of the verb), so that a shared address keeps them.
function currentParams() {
  const p = paramsFromForm();
  for (const [k, v] of new URLSearchParams(location.search))
    if (!form.elements.namedItem(k)) p.append(k, v);
  return p;
}

function formFromParams(p) {
  for (const [k, v] of p) {
    const el = form.elements.namedItem(k);
    if (!el) continue;
    if (el.tagName === 'SELECT' && ![...el.options].some((o) => o.value === v)) {
      const o = document.createElement('option');
      o.value = o.textContent = v;
      el.appendChild(o);
    }
    el.value = v;
  }
}

function fill(select, items, label) {
  for (const it of items) {
    const o = document.createElement('option');
    o.value = it.key;
    o.textContent = label(it);
    select.appendChild(o);
  }
}

function human(k, v) {
  if (typeof v !== 'number') return String(v);
  if (k === 'mfu' || k === 'hfu' || k === 'goodput') return (100 * v).toFixed(1) + '%';
  if (k.endsWith('_bytes')) return (v / 1e9).toFixed(2) + ' GB';
  if (k.endsWith('_time_s') && v > 3600) return (v / 3600).toFixed(1) + ' h';
  return Math.abs(v) >= 1e5 ? v.toExponential(3) : String(+v.toPrecision(5));
}

// The top-level figures of the JSON (scalars), as they are.
function showSummary(doc) {
  const t = document.getElementById('summary');
  t.innerHTML = '';
  for (const [k, v] of Object.entries(doc)) {
    if (v === null || typeof v === 'object' || k === 'schema_version' || k === 'notes') continue;
    const r = t.insertRow();
    r.insertCell().textContent = k;
    r.insertCell().textContent = human(k, v);
  }
  // lists of results (search's layouts, a GPU-count sweep): one row each, their scalar figures
  for (const [k, v] of Object.entries(doc)) {
    if (!Array.isArray(v) || !v.length || typeof v[0] !== 'object' || k === 'fixes') continue;
    const cols = Object.keys(v[0]).filter((c) => v[0][c] === null || typeof v[0][c] !== 'object');
    const head = t.insertRow();
    head.insertCell().textContent = k;
    for (const c of cols) head.insertCell().textContent = c;
    v.forEach((row, i) => {
      const r = t.insertRow();
      r.insertCell().textContent = String(i + 1);
      for (const c of cols) r.insertCell().textContent = row[c] === undefined ? '' : human(c, row[c]);
    });
  }
  const fixes = document.getElementById('fixes');
  fixes.innerHTML = '';
  showFixes(fixes, doc);
}

// A change that makes the run fit is data (settings: the request's keys and values); shown as
// the CLI's flags, "--pp 8 (dp 1)".
function fixText(f) {
  const parallel = ['tp', 'pp', 'cp', 'ep'].some((k) => k in f.settings);
  return Object.entries(f.settings)
    .map(([k, v]) => '--' + k.replace(/_/g, '-') + (v === true ? '' : ' ' + v))
    .join(' ') + (parallel ? ' (dp ' + f.dp + ')' : '');
}

function showFixes(list, doc) {
  const all = (doc.fixes || []).concat(doc.fits_with && !(doc.fixes || []).length ? [doc.fits_with] : []);
  for (const f of all) {
    const li = document.createElement('li');
    li.textContent = 'fits with ' + fixText(f) + ' (' + human('total_bytes', f.total_bytes) + ')';
    list.appendChild(li);
  }
}

function compute(params) {
  const config = document.getElementById('config').value.trim();
  if (config) {
    core.FS.writeFile('/config.json', config);
    params.set('model', '/config.json');
  }
  const args = cliArgs(params);
  document.getElementById('command').textContent = 'trainplan ' + args.join(' ');
  try { core.FS.unlink('/plot.svg'); } catch (e) { /* none yet */ }
  const r = run(args);
  document.getElementById('result-json').textContent = r.out;
  const plot = document.getElementById('plot');
  plot.innerHTML = '';
  try {
    plot.innerHTML = core.FS.readFile('/plot.svg', { encoding: 'utf8' });
  } catch (e) { /* this verb and these inputs have no plot */ }
  statusLine.className = r.code === 2 ? 'error' : '';
  statusLine.textContent = r.code === 2 ? r.err : r.code === 1
    ? 'the answer is no (does not fit, or no feasible layout): see below' : 'done';
  document.getElementById('summary').innerHTML = '';
  if (r.out) showSummary(JSON.parse(r.out));
  if (params.get('verb') === 'estimate' && r.code !== 2) memoryToo(args, plot);
  document.body.dataset.exit = String(r.code);
}

// estimate's page also shows the memory plot and the changes that make the run fit: `trainplan
// memory` with the same run (the options memory takes, from its schema); the JSON shown stays
// estimate's.
function memoryToo(args, plot) {
  const est = optionsOf('estimate');
  const mem = optionsOf('memory');
  const m = ['memory', args[1]];
  for (let i = 2; i < args.length && args[i] !== '--format'; i++) {
    const o = est[args[i].replace(/^--/, '')];
    const takesValue = !o || o.kind !== 'flag';
    const keep = o && mem[o.name];
    if (keep) m.push(args[i]);
    if (takesValue) {
      i++;
      if (keep) m.push(args[i]);
    }
  }
  m.push('--format', 'json', '--svg', '/memory.svg');
  const r = run(m);
  if (r.code === 2) return;
  const div = document.createElement('div');
  div.innerHTML = core.FS.readFile('/memory.svg', { encoding: 'utf8' });
  plot.appendChild(div);
  showFixes(document.getElementById('fixes'), JSON.parse(r.out));
}

// The form for a verb: the inputs it takes shown, the others hidden; the choices of a list
// from the option's own.
function showVerb(verb) {
  const opts = optionsOf(verb);
  for (const el of form.elements) {
    if (!el.name || el.name === 'verb') continue;
    const label = el.closest('label');
    const shown = el.name === 'model' ? verbInfo(verb).model : Boolean(opts[el.name]);
    if (label) label.hidden = !shown;
    const o = opts[el.name];
    if (o && o.kind === 'enum' && el.tagName === 'SELECT' && el.options.length <= 1)
      fill(el, o.choices.split('|').map((c) => ({ key: c })), (x) => x.key);
  }
  for (const fs of form.querySelectorAll('fieldset'))
    fs.hidden = ![...fs.querySelectorAll('label')].some((l) => !l.hidden);
}

form.addEventListener('submit', (ev) => {
  ev.preventDefault();
  const p = currentParams();
  if (!document.getElementById('config').value.trim())
    history.replaceState(null, '', '?' + p.toString());
  compute(p);
});

createTrainplan({
  print: (line) => stdout.push(line),
  printErr: (line) => stderr.push(line),
}).then((m) => {
  core = m;
  const models = JSON.parse(run(['models', '--format', 'json']).out).models;
  fill(document.getElementById('model'), models, (x) => x.key + ' - ' + x.label);
  const gpus = JSON.parse(run(['gpus', '--format', 'json']).out).gpus;
  fill(document.getElementById('gpu'), gpus, (x) => x.key + ' - ' + x.label);
  document.getElementById('model').value = 'llama-3.1-8b';
  verbs = JSON.parse(run(['verbs']).out).verbs;
  fill(form.elements.namedItem('verb'), verbs.map((v) => ({ key: v.name })), (x) => x.key);
  const p = new URLSearchParams(location.search);
  form.elements.namedItem('verb').value = p.get('verb') || 'estimate';
  showVerb(form.elements.namedItem('verb').value);
  formFromParams(p);
  form.elements.namedItem('verb').addEventListener('change', (ev) => showVerb(ev.target.value));
  statusLine.textContent = 'ready';
  if (p.has('verb')) compute(currentParams());
  document.body.dataset.ready = '1';
});
