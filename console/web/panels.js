/* History, Injection and Export / import panels (Audit: audit.js, Health: health.js). */
(function () {
  'use strict';
  const MV = window.MV;
  const { h, t } = MV;
  MV.panels = MV.panels || {};

  /** A panel with one request at a time; answers of older requests are dropped. */
  function panel(name, needsScope, spec) {
    const ui = Object.assign({ seq: 0, data: null }, spec.state ? spec.state() : {});
    const self = { needsScope, ui, root: null };
    self.build = () => { if (!self.root) { self.root = MV.$('#panel-' + name); spec.build(self); } };
    self.clear = () => {
      Object.assign(ui, { seq: ui.seq + 1, data: null }, spec.state ? spec.state() : {});
      self.build();
      spec.clear(self);
    };
    self.fetch = async (fn) => {
      self.build();
      const seq = ++ui.seq;
      self.root.setAttribute('aria-busy', 'true');
      try {
        const data = await fn();
        if (seq !== ui.seq) return;
        ui.data = data;
        ui.loaded = true;
        self.render();
      } catch (err) {
        if (seq === ui.seq) MV.fail(err);
      } finally {
        if (seq === ui.seq) self.root.removeAttribute('aria-busy');
      }
    };
    self.load = () => spec.load(self);
    self.render = () => { if (self.root && ui.loaded) spec.render(self); };
    MV.panels[name] = self;
    return self;
  }
  MV.panel = panel; // health.js builds its panel the same way

  function section(titleKey, ...children) {
    return h('section', { class: 'card' }, h('h3', { i18n: titleKey }), ...children);
  }

  // ------------------------------------------------------------------ history
  panel('history', true, {
    state: () => ({ id: null, open: {}, loaded: false }),
    build(p) {
      p.head = h('div', { class: 'toolbar' });
      p.list = h('ol', { class: 'commits', testid: 'commit-list' });
      p.root.replaceChildren(p.head, p.list);
    },
    clear(p) { MV.fill(p.head, ); p.list.replaceChildren(); },
    load(p) {
      p.ui.open = {};
      const body = { limit: 50 };
      if (p.ui.id) body.id = p.ui.id;
      return p.fetch(() => MV.call('/history', body));
    },
    render(p) {
      const { data, id } = p.ui;
      MV.fill(p.head, 
        id ? h('p', { testid: 'history-title' }, h('span', { i18n: 'history_of_memory' }), ' ', h('code', null, id))
          : h('p', { testid: 'history-title', i18n: 'history_of_chat' }),
        id ? h('button', { type: 'button', class: 'btn', testid: 'history-whole-chat', i18n: 'whole_chat_history',
          onclick: () => { p.ui.id = null; p.load(); } }) : null);
      if (!data.git) { p.list.replaceChildren(MV.emptyState('no_git', 'history-empty')); return; }
      const commits = data.commits || [];
      p.list.replaceChildren(...commits.map((c) => commitItem(p, c)));
      if (!commits.length) p.list.append(MV.emptyState('no_commits', 'history-empty'));
    },
  });

  function commitItem(p, commit) {
    const diffBox = h('div', { class: 'diff-box', testid: 'diff-box' });
    const toggle = h('button', { type: 'button', class: 'commit-toggle', testid: 'commit-toggle',
      'aria-expanded': 'false' },
    h('code', { class: 'sha' }, MV.short(commit.sha)),
    h('span', { class: 'commit-msg' }, commit.message || ''),
    h('span', { class: 'muted small' }, MV.fmtDate(commit.timestamp) + ' · ' + (commit.author || '') +
      ' · ' + t('n_files', { n: (commit.files || []).length })));
    toggle.addEventListener('click', async () => {
      const open = toggle.getAttribute('aria-expanded') === 'true';
      toggle.setAttribute('aria-expanded', open ? 'false' : 'true');
      if (open) { diffBox.replaceChildren(); return; }
      diffBox.replaceChildren(MV.loading());
      const seq = p.ui.seq;
      try {
        const body = { sha: commit.sha };
        if (p.ui.id) body.id = p.ui.id;
        const diff = await MV.call('/history/diff', body);
        if (seq !== p.ui.seq) return;
        MV.fill(diffBox,
          h('ul', { class: 'files small' }, (diff.files || []).map((f) => h('li', null, h('code', null, f)))),
          renderDiff(diff.diff || ''),
          diff.truncated ? h('p', { class: 'warn small', i18n: 'diff_truncated' }) : null);
      } catch (err) {
        diffBox.replaceChildren();
        toggle.setAttribute('aria-expanded', 'false');
        MV.fail(err);
      }
    });
    return h('li', { class: 'commit', testid: 'commit', 'data-sha': commit.sha }, toggle, diffBox);
  }

  function renderDiff(text) {
    const pre = h('pre', { class: 'diff', testid: 'diff' });
    if (!text.trim()) return MV.emptyState('empty_diff', 'diff-empty');
    for (const line of text.split('\n')) {
      let cls = 'ctx';
      if (/^(diff |index |--- |\+\+\+ |new file|deleted file|similarity|rename )/.test(line)) cls = 'meta';
      else if (line.startsWith('@@')) cls = 'hunk';
      else if (line.startsWith('+')) cls = 'add';
      else if (line.startsWith('-')) cls = 'del';
      pre.append(h('span', { class: 'dl dl-' + cls, 'data-kind': cls }, line + '\n'));
    }
    return pre;
  }

  MV.showHistory = function (id) {
    const p = MV.panels.history;
    p.clear();
    p.ui.id = id;
    MV.markDirty(['history']);
    MV.selectTab('history', true);
  };

  // ------------------------------------------------------------------ injection
  panel('injection', true, {
    state: () => ({ loaded: false }),
    build(p) {
      p.body = h('div', { class: 'stack', testid: 'injection' });
      // The recall test (recall.js) above the last real turn: the same blocks, on demand.
      p.test = MV.recallTest.build();
      p.root.replaceChildren(p.test.root, p.body);
    },
    clear(p) { p.body.replaceChildren(); p.test.clear(); },
    load(p) { p.test.load(); return p.fetch(() => MV.call('/injection', {})); },
    render(p) {
      p.test.render();
      const snap = p.ui.data;
      if (!snap) { p.body.replaceChildren(MV.emptyState('no_injection', 'injection-empty')); return; }
      const speaker = snap.speaker ? [snap.speaker.name, snap.speaker.id ? '(' + snap.speaker.id + ')' : ''].join(' ').trim() : '';
      const row = (key, value) => (value == null || value === '' ? null
        : [h('dt', { i18n: key }), h('dd', { 'data-key': key }, String(value))]);
      // Why the memory block is empty, or why recall found nothing while critical memories
      // still went in (the reason the search itself gave: indexer/retrieval/outcome.py).
      const whyRow = (key, reason) => (!reason || typeof reason !== 'object' ? null
        : [h('dt', { i18n: key }), h('dd', { 'data-key': key }, MV.explain.why(reason, 'injection-why'))]);
      const summary = h('dl', { class: 'kv', testid: 'injection-summary' },
        row('recorded_at', MV.fmtDate(snap.recorded_at)),
        row('injected', t(snap.injected ? 'yes' : 'no')),
        row('injection_chars', snap.budget_chars ? t('chars_of_budget', { chars: snap.injection_chars, budget: snap.budget_chars })
          : snap.injection_chars),
        row('speaker', speaker),
        row('episode_count', snap.episode_count),
        row('recalled_count', snap.recalled_count),
        // The gate's decision and the floor that applied (indexer.retrieval.verdict's words).
        row('recall_verdict', [snap.gate, snap.floor].filter(Boolean).join('; ')),
        whyRow('nothing_injected', snap.nothing_injected),
        snap.nothing_injected ? null : whyRow('nothing_recalled', snap.why),
        row('left_out', snap.left_out),
        row('isolation', snap.isolation),
        row('user_key', snap.user_key));
      const episodes = (snap.episodes || []).map((e, i) => h('li', { testid: 'injection-episode' },
        typeof e === 'string' ? e : (e.content || JSON.stringify(e)),
        snap.episode_ids && snap.episode_ids[i] ? h('code', { class: 'muted small' }, ' ' + snap.episode_ids[i]) : null));
      MV.fill(p.body,
        section('last_injection', summary),
        placedSection(snap),
        section('injected_episodes', episodes.length ? h('ol', { class: 'injected' }, episodes) : MV.emptyState('none')),
        retrieveSection(snap),
        profileSection('session_profile', snap.session_profile),
        profileSection('speaker_profile', snap.speaker_profile),
        section('raw_json', MV.jsonTools('injection', () => 'injection.json', () => JSON.stringify(snap, null, 2))));
    },
  });

  // Where the injector put each block (snapshot `placed`), as recorded; nothing is inferred.
  function placedSection(snap) {
    if (!snap.placed || typeof snap.placed !== 'object') {
      return section('placed_title', MV.emptyState('placed_unknown', 'injection-placed-unknown'));
    }
    const rows = Object.entries(snap.placed).map(([target, blocks]) => [
      h('dt', null, target),
      h('dd', { 'data-target': target },
        (Array.isArray(blocks) && blocks.length) ? blocks.map((b) => t('block_' + b)).join(', ') : t('nothing_placed'))]);
    const shown = snap.episode_ids || [];
    const left = (snap.recalled_ids || []).filter((id) => !shown.includes(id));
    if (left.length) rows.push([h('dt', { i18n: 'left_out_ids' }), idList(left, 'injection-left-out')]);
    return section('placed_title', h('dl', { class: 'kv', testid: 'injection-placed' }, rows));
  }

  // What the runner's knowledge-base retrieve served and withheld in the same turn.
  function retrieveSection(snap) {
    if (!snap.placed) return null;
    const r = snap.retrieve;
    if (!r || typeof r !== 'object') {
      return section('retrieve_title', MV.emptyState('no_retrieve', 'injection-retrieve-none'));
    }
    return section('retrieve_title', h('dl', { class: 'kv', testid: 'injection-retrieve' },
      h('dt', { i18n: 'retrieve_searched' }),
      h('dd', { 'data-key': 'searched' }, t(r.searched ? 'retrieve_did_search' : 'retrieve_no_search')),
      h('dt', { i18n: 'retrieve_served' }), idList(r.served_ids || [], 'retrieve-served'),
      h('dt', { i18n: 'retrieve_withheld' }), idList(r.withheld_ids || [], 'retrieve-withheld'),
      r.at ? [h('dt', { i18n: 'recorded_at' }), h('dd', null, MV.fmtDate(r.at))] : null));
  }

  function idList(ids, testid) {
    return h('dd', { testid },
      ids.length ? ids.map((id) => h('code', { class: 'small', 'data-id': String(id) }, String(id) + ' ')) : t('none'));
  }

  function profileSection(key, prof) {
    if (!prof) return null;
    const parts = [];
    if (prof.name) parts.push([t('field_name'), prof.name]);
    if ((prof.traits || []).length) parts.push([t('field_traits'), prof.traits.join('; ')]);
    if ((prof.preferences || []).length) parts.push([t('field_preferences'), prof.preferences.join('; ')]);
    if (prof.notes) parts.push([t('field_notes'), prof.notes]);
    return section(key, parts.length
      ? h('dl', { class: 'kv' }, parts.map(([k, v]) => [h('dt', null, k), h('dd', null, String(v))]))
      : MV.emptyState('none'));
  }

  // ------------------------------------------------------------------ export / import
  panel('transfer', true, {
    state: () => ({ loaded: true }),
    build(p) {
      p.exportText = null;
      const fileInput = h('input', { type: 'file', accept: '.json,application/json', id: 'import-file', testid: 'import-file' });
      p.area = h('textarea', { id: 'import-json', testid: 'import-json', rows: 8, spellcheck: 'false',
        'data-i18n-attr': 'placeholder', i18n: 'import_placeholder' });
      p.result = h('div', { testid: 'import-result', 'aria-live': 'polite' });
      fileInput.addEventListener('change', async () => {
        const file = fileInput.files && fileInput.files[0];
        if (file) p.area.value = await file.text();
      });
      const form = h('form', { class: 'stack', testid: 'import-form' },
        h('label', { for: 'import-file', i18n: 'import_choose' }), fileInput,
        h('label', { for: 'import-json', i18n: 'import_paste' }), p.area,
        h('div', null, h('button', { type: 'submit', class: 'btn btn-primary', testid: 'import-button', i18n: 'import' })));
      form.addEventListener('submit', (e) => { e.preventDefault(); doImport(p, form); });
      p.exportOut = h('div', { testid: 'export-output' });
      const exportButton = h('button', { type: 'button', class: 'btn btn-primary', testid: 'export-button', i18n: 'export',
        onclick: () => doExport(p, exportButton) });
      p.root.replaceChildren(
        section('export_title', h('p', { class: 'muted', i18n: 'export_help' }), exportButton, p.exportOut),
        section('import_title', h('p', { class: 'muted', i18n: 'import_help' }), form, p.result));
    },
    clear(p) { p.exportOut.replaceChildren(); p.result.replaceChildren(); p.area.value = ''; },
    load() { /* nothing to fetch until asked */ },
    render() {},
  });

  async function doExport(p, button) {
    const seq = p.ui.seq;
    try {
      const data = await MV.busy(button.parentElement, MV.call('/export', {}));
      if (seq !== p.ui.seq) return;
      const text = JSON.stringify(data, null, 2);
      const name = 'memvault-' + String(MV.state.scope.session).replace(/[^\w.-]+/g, '_') + '.json';
      const tools = MV.jsonTools('export', () => name, () => text);
      tools.querySelector('textarea').hidden = false;
      tools.querySelector('textarea').value = text;
      // A backup that leaves files out says so above the JSON, naming them.
      const bad = data.unreadable || [];
      const files = bad.slice(0, 5).map((u) => u.file + ':' + u.line).join(', ') + (bad.length > 5 ? ', …' : '');
      p.exportOut.replaceChildren(...(bad.length ? [h('p', { class: 'warn', role: 'alert', testid: 'export-unreadable',
        i18n: 'export_unreadable', vars: { count: bad.length, files } })] : []), tools);
    } catch (err) { MV.fail(err); }
  }

  async function doImport(p, form) {
    const seq = p.ui.seq;
    let payload;
    try { payload = JSON.parse(p.area.value); } catch (e) {
      MV.showError(new Error(t('import_bad_json', { reason: e.message })));
      return;
    }
    try {
      const data = await MV.busy(form, MV.call('/import', { payload }));
      if (seq !== p.ui.seq) return;
      MV.hideError();
      MV.fill(p.result, h('p', { class: 'ok', testid: 'import-summary', i18n: 'import_done',
        vars: { imported: data.imported || 0, skipped: data.skipped || 0 } }),
      (data.ids || []).length ? h('details', { class: 'small' }, h('summary', { i18n: 'import_ids' }),
        h('ul', null, data.ids.map((id) => h('li', null, h('code', null, String(id)))))) : null);
      MV.markDirty(['episodes', 'profiles', 'history', 'audit', 'health']);
      MV.refreshScopes();
    } catch (err) { MV.fail(err); }
  }
})();
