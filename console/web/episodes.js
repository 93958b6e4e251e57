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
    editing: null, seq: 0, unsaved: {} };
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
    // Synapse's fields (fields.js): filters for the list and the search, a "new memory" form.
    const filters = MV.fields.filterBar(() => { ui.page = 1; load(); });
    const creating = h('div', { testid: 'episode-create' });
    const closeCreate = () => creating.replaceChildren();
    const newButton = h('button', { type: 'button', class: 'btn', testid: 'episode-new', i18n: 'new_memory',
      onclick: () => creating.replaceChildren(MV.fields.createForm(() => { closeCreate(); load(); }, closeCreate)) });
    els = {
      status, query, mode, form, filters, creating,
      summary: h('p', { class: 'muted summary', testid: 'episode-summary', 'aria-live': 'polite' }),
      problems: h('div', { testid: 'episode-problems' }),
      list: h('div', { class: 'episode-list', testid: 'episode-list' }),
      pager: h('nav', { class: 'pager', testid: 'pager', 'aria-label': t('pages') }),
    };
    root.replaceChildren(
      h('div', { class: 'toolbar' }, form,
        h('label', { class: 'inline-label' }, h('span', { i18n: 'status' }), status), newButton),
      filters.node, creating, els.summary, els.problems, els.list, els.pager);
  }

  function clear() {
    Object.assign(ui, { status: 'active', page: 1, query: '', mode: 'hybrid', list: null,
      results: null, editing: null, unsaved: {} });
    ui.seq++;
    if (!root) build();
    els.status.value = 'active';
    els.query.value = '';
    els.mode.value = 'hybrid';
    els.filters.reset();
    els.creating.replaceChildren();
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
        const body = Object.assign({ query: ui.query, mode: ui.mode, top_k: 20 }, els.filters.body());
        if (ui.status !== 'active') body.status = ui.status;
        const data = await MV.call('/search', body);
        if (seq !== ui.seq) return;
        ui.results = data;
      } else {
        const data = await MV.call('/episodes',
          Object.assign({ status: ui.status, page: ui.page }, els.filters.body()));
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
      // The gate's decision and the floor that applied: the words `memvault search` prints.
      if (ui.results.verdict) {
        els.summary.append(' ', h('span', { class: 'muted', testid: 'search-verdict' }, ui.results.verdict));
      }
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

  /** A field of a fixed vocabulary (category, source): its name in the reader's language. */
  function namedItem(key, prefix, value) {
    if (value == null || value === '') return null;
    return [h('dt', { i18n: 'field_' + key }),
      h('dd', { 'data-key': key }, MV.named(prefix, value, { testid: 'episode-' + key }))];
  }

  function card(ep) {
    const node = h('article', { class: 'card episode status-' + ep.status, testid: 'episode-card',
      'data-id': ep.id, 'data-status': ep.status });
    const speaker = ep.speaker ? (ep.speaker.name || ep.speaker.id) : null;
    const head = h('div', { class: 'ep-head' },
      h('span', { class: 'badge badge-' + ep.status, testid: 'episode-status', i18n: 'status_' + ep.status }),
      // Still `active` in its file, but past expires_at: recall and search leave it out.
      ep.expired ? h('span', { class: 'badge badge-expired', testid: 'episode-expired', i18n: 'expired',
        title: t('expired_since', { date: MV.fmtDate(ep.expires_at) }) }) : null,
      // The ranking number ("score", may exceed 1), named so it is never read as the relevance
      // the chip next to it shows.
      typeof ep.score === 'number' ? h('span', { class: 'score-wrap', testid: 'episode-score-label' },
        h('span', { class: 'score-name muted', i18n: 'score' }), ' ',
        h('span', { class: 'score', testid: 'episode-score', title: t('score') }, MV.fmtNum(ep.score))) : null,
      MV.explain.chip(ep),
      h('span', { class: 'muted', title: ep.created_at || '' }, MV.fmtDate(ep.created_at)),
      speaker ? h('span', { class: 'speaker', title: ep.speaker.id || '' }, '@' + speaker) : null,
      h('span', { class: 'muted', title: t('field_importance') }, '★'.repeat(Math.max(0, Math.min(5, ep.importance || 0)))),
      ep.priority && ep.priority !== 'normal' ? h('span', { class: 'chip chip-priority-' + ep.priority,
        testid: 'episode-priority', 'data-priority': ep.priority, title: t('field_priority'),
        i18n: 'priority_' + ep.priority }) : null,
      ep.verified ? h('span', { class: 'chip chip-ok', testid: 'episode-verified', i18n: 'verified' }) : null);
    const content = h('p', { class: 'ep-content', testid: 'episode-content' }, ep.content || '');
    const tags = (ep.tags || []).length
      ? h('div', { class: 'tags', testid: 'episode-tags' }, ep.tags.map((tag) => chip('#' + tag))) : null;
    const details = h('details', { class: 'ep-more' },
      h('summary', { i18n: 'details' }),
      h('dl', { class: 'kv' },
        metaItem('id', ep.id), metaItem('path', ep.path), metaItem('key', ep.key),
        namedItem('category', 'category_', ep.category), namedItem('source', 'source_', ep.source),
        metaItem('confidence', ep.confidence), metaItem('expires_at', ep.expires_at),
        metaItem('superseded_by', ep.superseded_by), metaItem('sha256', ep.sha256),
        Object.entries(ep.extra || {}).map(([k, v]) => [h('dt', null, k),
          h('dd', null, h('code', null, typeof v === 'string' ? v : JSON.stringify(v)))])));
    MV.append(node, [head, content, tags, ep.explain ? MV.explain.line(ep.explain) : null, details,
      ep.explain ? MV.explain.table(ep.explain) : null,
      ui.editing === ep.id ? editForm(ep) : actions(ep)]);
    return node;
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
    // After a conflict the person's text stays in the form until they choose (see conflictBox).
    const mine = ui.unsaved[ep.id];
    const area = h('textarea', { class: 'edit-content', testid: 'episode-edit-content', rows: 5,
      'aria-label': t('content') });
    area.value = ep.content || '';
    const tags = h('input', { class: 'edit-tags', testid: 'episode-edit-tags', 'aria-label': t('tags_hint'),
      autocomplete: 'off' });
    tags.value = (ep.tags || []).join(', ');
    const fields = MV.fields.fieldInputs(ep);  // category, key, priority, expiry, confidence
    const form = h('form', { class: 'edit-form stack', testid: 'episode-edit-form' },
      h('label', null, h('span', { i18n: 'content' }), area),
      h('label', null, h('span', { i18n: 'tags_hint' }), tags),
      fields.nodes,
      h('div', { class: 'row' },
        h('button', { type: 'submit', class: 'btn btn-primary', testid: 'episode-edit-save', i18n: 'save' }),
        h('button', { type: 'button', class: 'btn', testid: 'episode-edit-cancel', i18n: 'cancel',
          onclick: () => { ui.editing = null; delete ui.unsaved[ep.id]; replaceCard(ep); } })));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const extra = {};
      if (area.value !== (ep.content || '')) extra.content = area.value;
      const newTags = tags.value.split(/[,，]/).map((s) => s.trim().replace(/^#/, '')).filter(Boolean);
      if (newTags.join('\n') !== (ep.tags || []).join('\n')) extra.tags = newTags;
      Object.assign(extra, fields.collect());
      if (!Object.keys(extra).length) { ui.editing = null; replaceCard(ep); return; }
      change(ep, 'edit', form, extra);
    });
    if (mine) {
      form.prepend(conflictBox(ep, mine, form));
      if (!mine.reloaded) MV.putTyped(form, mine.values); // re-drawn (a language switch): mine
    }
    // After the form is in the page; never steal the focus from a field already chosen
    // (a fast typist, or a test filling the tags, would type into the body instead).
    setTimeout(() => { if (!form.contains(document.activeElement)) area.focus(); }, 0);
    return form;
  }

  function conflictBox(ep, mine, form) {
    return MV.conflictBox(mine, form, (button) => loadDisk(ep, mine, button));
  }

  async function loadDisk(ep, mine, button) {
    const seq = ui.seq;
    try {
      const fresh = await MV.busy(button.parentElement, MV.call('/episode', { id: ep.id }));
      if (seq !== ui.seq) return;
      MV.hideError();
      mine.reloaded = true;
      replaceCard(Object.assign({}, ep, fresh, { score: ep.score, explain: ep.explain }));
    } catch (err) { MV.fail(err); }
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
      delete ui.unsaved[ep.id];
      replaceCard(Object.assign({}, ep, fresh, { score: ep.score, explain: ep.explain }));
    } catch (err) {
      if (err === MV.STALE || seq !== ui.seq) return;
      if (!MV.isConflict(err)) return MV.fail(err);
      if (action !== 'edit') {
        MV.showError(err, 'conflict_reloaded');
        return load();
      }
      // Keep what the person typed, in every field (never replaced by the disk version unasked):
      // the form stays as it is, with the choices on top of it.
      const form = el.closest('[data-testid="episode-edit-form"]') || el;
      const values = MV.typed(form, (id, field) => !!field.closest('[data-testid="episode-conflict"]'));
      const mine = { content: values['episode-edit-content'] || '', values, reloaded: false };
      ui.unsaved[ep.id] = mine;
      MV.showError(err, 'conflict_edit_kept');
      const old = form.querySelector(':scope > [data-testid="episode-conflict"]');
      if (old) old.remove();
      form.prepend(conflictBox(ep, mine, form));
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
