/* Episodes panel: paged list with a status filter, hybrid search with score explain, and the
 * per-memory actions (archive / restore / verify / edit / delete), each sending the sha256 the
 * page showed as expected_sha256. */
(function () {
  'use strict';
  const MV = window.MV;
  const { h, t } = MV;

  const STATUSES = ['active', 'archived', 'superseded', 'all'];
  const MODES = ['hybrid', 'text', 'vector'];
  const ui = { status: 'active', page: 1, query: '', mode: 'hybrid', list: null, results: null,
    editing: null, seq: 0 };
  let root = null;
  let els = {};

  function build() {
    root = MV.$('#panel-episodes');
    const status = h('select', { id: 'episode-status', testid: 'episode-status-filter' },
      STATUSES.map((s) => h('option', { value: s, i18n: 'status_' + s })));
    status.addEventListener('change', () => {
      ui.status = status.value; ui.page = 1;
      load();
    });
    const query = h('input', { type: 'search', id: 'search-input', testid: 'search-input',
      'data-i18n-attr': 'placeholder', i18n: 'search_placeholder', autocomplete: 'off' });
    const mode = h('select', { id: 'search-mode', testid: 'search-mode', 'aria-label': t('search_mode') },
      MODES.map((m) => h('option', { value: m, i18n: 'mode_' + m })));
    const form = h('form', { class: 'search-form', testid: 'search-form', role: 'search' },
      h('label', { class: 'visually-hidden', for: 'search-input', i18n: 'search' }), query, mode,
      h('button', { type: 'submit', class: 'btn btn-primary', testid: 'search-button', i18n: 'search' }),
      h('button', { type: 'button', class: 'btn', testid: 'search-clear', i18n: 'clear_search',
        onclick: () => { query.value = ''; ui.query = ''; ui.results = null; load(); } }));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      ui.query = query.value.trim();
      ui.mode = mode.value;
      if (!ui.query) ui.results = null;
      load();
    });
    els = {
      status, query, mode, form,
      summary: h('p', { class: 'muted summary', testid: 'episode-summary', 'aria-live': 'polite' }),
      problems: h('div', { testid: 'episode-problems' }),
      list: h('div', { class: 'episode-list', testid: 'episode-list' }),
      pager: h('nav', { class: 'pager', testid: 'pager', 'aria-label': t('pages') }),
    };
    root.replaceChildren(
      h('div', { class: 'toolbar' }, form,
        h('label', { class: 'inline-label' }, h('span', { i18n: 'status' }), status)),
      els.summary, els.problems, els.list, els.pager);
  }

  function clear() {
    Object.assign(ui, { status: 'active', page: 1, query: '', mode: 'hybrid', list: null,
      results: null, editing: null });
    ui.seq++;
    if (!root) build();
    els.status.value = 'active';
    els.query.value = '';
    els.mode.value = 'hybrid';
    els.summary.replaceChildren();
    els.problems.replaceChildren();
    els.list.replaceChildren();
    els.pager.replaceChildren();
  }

  async function load() {
    if (!root) build();
    const seq = ++ui.seq;
    els.list.setAttribute('aria-busy', 'true');
    try {
      if (ui.query) {
        const body = { query: ui.query, mode: ui.mode, top_k: 20 };
        if (ui.status !== 'active') body.status = ui.status;
        const data = await MV.call('/search', body);
        if (seq !== ui.seq) return;
        ui.results = data;
      } else {
        const data = await MV.call('/episodes', { status: ui.status, page: ui.page });
        if (seq !== ui.seq) return;
        ui.results = null;
        ui.list = data;
        if (data.pages && ui.page > data.pages) { ui.page = data.pages; return load(); }
      }
      render();
    } catch (err) {
      if (seq === ui.seq) MV.fail(err);
    } finally {
      if (seq === ui.seq) els.list.removeAttribute('aria-busy');
    }
  }

  function items() {
    if (ui.results) return ui.results.items || [];
    return (ui.list && ui.list.items) || [];
  }

  function render() {
    if (!root || (!ui.list && !ui.results)) return;
    if (ui.results) {
      MV.tr(els.summary, 'search_summary', { count: items().length, query: ui.query });
    } else {
      MV.tr(els.summary, 'episodes_summary', { total: ui.list.total || 0, status: t('status_' + ui.status) });
    }
    const problems = (!ui.results && ui.list.problems) || [];
    MV.fill(els.problems, problems.length ? h('ul', { class: 'problems warn small' }, problems.map((x) =>
      h('li', { testid: 'episode-problem' }, (x.path || '?') + (x.line != null ? ':' + x.line : '') + ': ' + (x.message || '')))) : null);
    els.list.replaceChildren(...items().map(card));
    if (!items().length) {
      els.list.append(MV.emptyState(ui.results ? 'no_results' : 'no_episodes', 'episodes-empty'));
    }
    renderPager();
  }

  function renderPager() {
    els.pager.replaceChildren();
    if (ui.results || !ui.list) return;
    const pages = Math.max(1, ui.list.pages || 1);
    const go = (page) => () => { ui.page = page; load(); };
    MV.append(els.pager, [
      h('button', { type: 'button', class: 'btn', testid: 'pager-prev', i18n: 'previous',
        disabled: ui.page <= 1, onclick: go(ui.page - 1) }),
      h('span', { class: 'muted', testid: 'pager-info', i18n: 'page_of',
        vars: { page: ui.list.page || ui.page, pages } }),
      h('button', { type: 'button', class: 'btn', testid: 'pager-next', i18n: 'next',
        disabled: ui.page >= pages, onclick: go(ui.page + 1) })]);
  }

  function chip(text, cls) { return h('span', { class: 'chip ' + (cls || '') }, text); }

  function metaItem(key, value) {
    if (value == null || value === '') return null;
    return [h('dt', { i18n: 'field_' + key }), h('dd', null, h('code', null, String(value)))];
  }

  function card(ep) {
    const node = h('article', { class: 'card episode status-' + ep.status, testid: 'episode-card',
      'data-id': ep.id, 'data-status': ep.status });
    const speaker = ep.speaker ? (ep.speaker.name || ep.speaker.id) : null;
    const head = h('div', { class: 'ep-head' },
      h('span', { class: 'badge badge-' + ep.status, testid: 'episode-status', i18n: 'status_' + ep.status }),
      typeof ep.score === 'number'
        ? h('span', { class: 'score', testid: 'episode-score', title: t('score') }, MV.fmtNum(ep.score)) : null,
      relevanceChip(ep),
      h('span', { class: 'muted', title: ep.created_at || '' }, MV.fmtDate(ep.created_at)),
      speaker ? h('span', { class: 'speaker', title: ep.speaker.id || '' }, '@' + speaker) : null,
      h('span', { class: 'muted', title: t('field_importance') }, '★'.repeat(Math.max(0, Math.min(5, ep.importance || 0)))),
      ep.verified ? h('span', { class: 'chip chip-ok', testid: 'episode-verified', i18n: 'verified' }) : null);
    const content = h('p', { class: 'ep-content', testid: 'episode-content' }, ep.content || '');
    const tags = (ep.tags || []).length
      ? h('div', { class: 'tags', testid: 'episode-tags' }, ep.tags.map((tag) => chip('#' + tag))) : null;
    const details = h('details', { class: 'ep-more' },
      h('summary', { i18n: 'details' }),
      h('dl', { class: 'kv' },
        metaItem('id', ep.id), metaItem('path', ep.path), metaItem('key', ep.key),
        metaItem('category', ep.category), metaItem('source', ep.source),
        metaItem('confidence', ep.confidence), metaItem('expires_at', ep.expires_at),
        metaItem('superseded_by', ep.superseded_by), metaItem('sha256', ep.sha256),
        Object.entries(ep.extra || {}).map(([k, v]) => [h('dt', null, k),
          h('dd', null, h('code', null, typeof v === 'string' ? v : JSON.stringify(v)))])));
    MV.append(node, [head, content, tags, ep.explain ? explainLine(ep.explain) : null, details,
      ep.explain ? explainBox(ep.explain) : null,
      ui.editing === ep.id ? editForm(ep) : actions(ep)]);
    return node;
  }

  /** Absolute relevance and whether it reaches the floor recall uses: the number is
   * explain.absolute.value with 3 decimals, as `memvault search --explain` prints it. */
  function relevanceChip(ep) {
    const abs = ep.explain && ep.explain.absolute;
    if (!abs || typeof abs.value !== 'number') return null;
    const vars = { value: abs.value.toFixed(3), floor: Number(abs.floor).toFixed(2) };
    return h('span', { class: 'chip ' + (abs.passed ? 'chip-ok' : 'chip-below'),
      testid: 'episode-relevance', 'data-passed': String(Boolean(abs.passed)),
      i18n: abs.passed ? 'relevance_passed' : 'relevance_below', vars });
  }

  // explain: any shape -> flat "a.b.c = value" rows, so new score components show up as-is.
  function flatten(value, prefix, out) {
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      for (const [key, inner] of Object.entries(value)) flatten(inner, prefix ? prefix + '.' + key : key, out);
    } else {
      out.push([prefix, Array.isArray(value) ? value.join(', ') : value]);
    }
    return out;
  }

  /** One line that is always visible: each list's rank and share, then the factors. */
  function explainLine(explain) {
    const parts = [];
    for (const [name, src] of Object.entries(explain.sources || {})) {
      if (!src || typeof src !== 'object') continue;
      parts.push(src.rank == null ? h('span', null, name + ' —')
        : h('span', null, name + ' #' + src.rank + ' ', h('b', null, (src.contribution >= 0 ? '+' : '') + MV.fmtNum(src.contribution))));
    }
    for (const key of ['relevance', 'recency', 'importance', 'speaker', 'update']) {
      if (typeof explain[key] === 'number' && explain[key] !== 1) parts.push(h('span', null, key + ' ×' + MV.fmtNum(explain[key])));
    }
    return parts.length ? h('div', { class: 'explain-line', testid: 'explain-summary' }, parts) : null;
  }

  function explainBox(explain) {
    const rows = flatten(explain, '', []);
    const main = ['absolute', 'fusion', 'text', 'vector', 'relevance', 'recency', 'importance', 'speaker', 'update', 'score'];
    const first = rows.filter(([k]) => main.some((m) => k === m || k.startsWith(m + '.') || k.startsWith('sources.' + m + '.')));
    const rest = rows.filter((r) => !first.includes(r));
    const tr = ([key, value]) => h('tr', { 'data-key': key },
      h('th', { scope: 'row' }, key), h('td', null, MV.fmtNum(value)));
    return h('details', { class: 'explain', testid: 'explain' },
      h('summary', { testid: 'explain-toggle', i18n: 'why_score' }),
      h('table', { class: 'explain-table', testid: 'explain-table' },
        h('tbody', null, first.map(tr), rest.map(tr))));
  }

  function actions(ep) {
    const bar = h('div', { class: 'actions row wrap' });
    const act = (name, key) => h('button', { type: 'button', class: 'btn', testid: 'episode-' + name,
      i18n: key, onclick: () => change(ep, name, bar) });
    MV.append(bar, [
      h('button', { type: 'button', class: 'btn', testid: 'episode-edit', i18n: 'edit',
        onclick: () => { ui.editing = ep.id; replaceCard(ep); } }),
      ep.status === 'active' ? act('archive', 'archive') : act('restore', 'restore'),
      ep.verified ? null : act('verify', 'verify'),
      h('button', { type: 'button', class: 'btn', testid: 'episode-history', i18n: 'history',
        onclick: () => MV.showHistory(ep.id) }),
      MV.confirmButton({ testid: 'episode-delete', label: 'delete', confirm: 'delete_confirm',
        question: 'delete_question', onConfirm: () => change(ep, 'delete', bar) })]);
    return bar;
  }

  function editForm(ep) {
    const area = h('textarea', { class: 'edit-content', testid: 'episode-edit-content', rows: 5,
      'aria-label': t('content') });
    area.value = ep.content || '';
    const tags = h('input', { class: 'edit-tags', testid: 'episode-edit-tags', 'aria-label': t('tags_hint'),
      autocomplete: 'off' });
    tags.value = (ep.tags || []).join(', ');
    const form = h('form', { class: 'edit-form stack', testid: 'episode-edit-form' },
      h('label', null, h('span', { i18n: 'content' }), area),
      h('label', null, h('span', { i18n: 'tags_hint' }), tags),
      h('div', { class: 'row' },
        h('button', { type: 'submit', class: 'btn btn-primary', testid: 'episode-edit-save', i18n: 'save' }),
        h('button', { type: 'button', class: 'btn', testid: 'episode-edit-cancel', i18n: 'cancel',
          onclick: () => { ui.editing = null; replaceCard(ep); } })));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const extra = {};
      if (area.value !== (ep.content || '')) extra.content = area.value;
      const newTags = tags.value.split(/[,，]/).map((s) => s.trim().replace(/^#/, '')).filter(Boolean);
      if (newTags.join('\n') !== (ep.tags || []).join('\n')) extra.tags = newTags;
      if (!Object.keys(extra).length) { ui.editing = null; replaceCard(ep); return; }
      change(ep, 'edit', form, extra);
    });
    // After the form is in the page; never steal the focus from a field already chosen
    // (a fast typist, or a test filling the tags, would type into the body instead).
    setTimeout(() => { if (!form.contains(document.activeElement)) area.focus(); }, 0);
    return form;
  }

  async function change(ep, action, el, extra) {
    const seq = ui.seq;
    const body = Object.assign({ id: ep.id, expected_sha256: ep.sha256 }, extra || {});
    try {
      const fresh = await MV.busy(el, MV.call('/episode/' + action, body));
      if (seq !== ui.seq) return;
      MV.hideError();
      MV.toast(t('done_' + action, { id: ep.id }));
      MV.markDirty(['history', 'audit', 'health']);
      if (action === 'delete') return removeCard(ep.id);
      ui.editing = null;
      replaceCard(Object.assign({}, ep, fresh, { score: ep.score, explain: ep.explain }));
    } catch (err) {
      if (err === MV.STALE || seq !== ui.seq) return;
      if (!MV.isConflict(err)) return MV.fail(err);
      MV.showError(new Error(MV.errorText(err) + ' ' + t('conflict_reloaded')));
      load();
    }
  }

  function store(ep) {
    for (const bag of [ui.list, ui.results]) {
      if (!bag || !bag.items) continue;
      bag.items = bag.items.map((old) => (old.id === ep.id ? Object.assign({}, old, ep) : old));
    }
  }

  function replaceCard(ep) {
    store(ep);
    const old = els.list.querySelector('[data-testid="episode-card"][data-id="' + CSS.escape(ep.id) + '"]');
    if (!old) return render();
    const fresh = card(ep);
    old.replaceWith(fresh);
    const focus = fresh.querySelector('textarea') || fresh.querySelector('.actions button');
    if (focus && ui.editing !== ep.id) focus.focus();
  }

  function removeCard(id) {
    for (const bag of [ui.list, ui.results]) {
      if (bag && bag.items) bag.items = bag.items.filter((e) => e.id !== id);
    }
    if (ui.list && !ui.results) ui.list.total = Math.max(0, (ui.list.total || 1) - 1);
    render();
  }

  MV.panels = MV.panels || {};
  MV.panels.episodes = { needsScope: true, load, clear, render, build: () => { if (!root) build(); } };
})();
