/* Candidates panel: the memories a model proposed for this chat, waiting for a person.
 * Pending ones first, each with what it would become, who said it, the evidence and the model
 * that proposed it; Accept / Edit then accept / Reject send the sha256 the page showed as
 * expected_sha256, so a decision over a file changed on disk since is refused (409). */
(function () {
  'use strict';
  const MV = window.MV;
  const { h, t } = MV;

  const FILTERS = ['pending', 'all', 'accepted', 'rejected'];
  const ui = { status: 'pending', page: 1, data: null, editing: null, seq: 0 };
  let root = null;
  let els = {};

  function build() {
    root = MV.$('#panel-candidates');
    const status = h('select', { id: 'candidate-status', testid: 'candidate-status-filter' },
      FILTERS.map((s) => h('option', { value: s, i18n: 'cand_filter_' + s })));
    status.addEventListener('change', () => { ui.status = status.value; ui.page = 1; load(); });
    els = {
      status,
      summary: h('p', { class: 'muted summary', testid: 'candidate-summary', 'aria-live': 'polite' }),
      problems: h('div', { testid: 'candidate-problems' }),
      list: h('div', { class: 'episode-list', testid: 'candidate-list' }),
      pager: h('nav', { class: 'pager', testid: 'candidate-pager', 'aria-label': t('pages') }),
    };
    root.replaceChildren(
      h('p', { class: 'muted small', i18n: 'cand_help' }),
      h('div', { class: 'toolbar' }, els.summary,
        h('label', { class: 'inline-label' }, h('span', { i18n: 'status' }), status)),
      els.problems, els.list, els.pager);
  }

  function clear() {
    Object.assign(ui, { status: 'pending', page: 1, data: null, editing: null });
    ui.seq++;
    if (!root) build();
    els.status.value = 'pending';
    [els.summary, els.problems, els.list, els.pager].forEach((el) => el.replaceChildren());
  }

  async function load() {
    if (!root) build();
    const seq = ++ui.seq;
    els.list.setAttribute('aria-busy', 'true');
    try {
      const data = await MV.call('/candidates', { status: ui.status, page: ui.page });
      if (seq !== ui.seq) return;
      if (data.pages && ui.page > data.pages) { ui.page = data.pages; return load(); }
      ui.data = data;
      ui.editing = null;
      render();
    } catch (err) {
      if (seq === ui.seq) MV.fail(err);
    } finally {
      if (seq === ui.seq) els.list.removeAttribute('aria-busy');
    }
  }

  function render() {
    if (!root || !ui.data) return;
    const data = ui.data;
    const counts = data.counts || {};
    MV.tr(els.summary, 'cand_summary', { pending: counts.pending || 0,
      accepted: counts.accepted || 0, rejected: counts.rejected || 0 });
    const problems = data.problems || [];
    MV.fill(els.problems, problems.length ? h('ul', { class: 'problems warn small' }, problems.map((x) =>
      h('li', { testid: 'candidate-problem' }, (x.path || '?') + (x.line != null ? ':' + x.line : '') + ': ' + (x.message || '')))) : null);
    const items = data.items || [];
    els.list.replaceChildren(...items.map(card));
    if (!items.length) els.list.append(MV.emptyState('cand_none_' + ui.status, 'candidates-empty'));
    const pages = Math.max(1, data.pages || 1);
    const go = (page) => () => { ui.page = page; load(); };
    MV.fill(els.pager, pages > 1 ? [
      h('button', { type: 'button', class: 'btn', testid: 'candidate-prev', i18n: 'previous',
        disabled: ui.page <= 1, onclick: go(ui.page - 1) }),
      h('span', { class: 'muted', i18n: 'page_of', vars: { page: data.page || ui.page, pages } }),
      h('button', { type: 'button', class: 'btn', testid: 'candidate-next', i18n: 'next',
        disabled: ui.page >= pages, onclick: go(ui.page + 1) })] : null);
  }

  function row(key, value, testid) {
    if (value == null || value === '') return null;
    return [h('dt', { i18n: key }), h('dd', { testid }, h('code', null, String(value)))];
  }

  /** What accepting it would change: an L1 profile field, or an episode correcting another. */
  function change(c) {
    if (c.kind === 'profile') {
      return h('dl', { class: 'kv small', testid: 'candidate-change' },
        row('cand_profile', t('cand_profile_' + c.profile)),
        row('cand_field', c.key ? c.field + ' · ' + c.key : c.field),
        row('cand_value', c.value, 'candidate-value'),
        row('cand_previous', c.previous));
    }
    return c.supersedes ? h('dl', { class: 'kv small', testid: 'candidate-change' },
      row('cand_corrects', c.supersedes)) : null;
  }

  function card(c) {
    const node = h('article', { class: 'card candidate status-' + c.status, testid: 'candidate-card',
      'data-id': c.id, 'data-status': c.status, 'data-kind': c.kind });
    const speaker = c.speaker ? (c.speaker.name || c.speaker.id) : null;
    const redacted = c.redacted || [];
    const head = h('div', { class: 'ep-head' },
      h('span', { class: 'badge badge-' + c.status, testid: 'candidate-status', i18n: 'cand_status_' + c.status }),
      h('span', { class: 'chip', testid: 'candidate-kind', i18n: 'cand_kind_' + c.kind }),
      h('span', { class: 'muted', title: c.created_at || '' }, MV.fmtDate(c.created_at)),
      speaker ? h('span', { class: 'speaker', testid: 'candidate-speaker', title: c.speaker.id || '' }, '@' + speaker) : null,
      redacted.length ? h('span', { class: 'chip chip-below', testid: 'candidate-redacted',
        i18n: 'cand_redacted', vars: { kinds: redacted.join(', ') } }) : null,
      c.proposed_by ? h('span', { class: 'muted small', testid: 'candidate-proposed-by',
        i18n: 'cand_proposed_by', vars: { model: c.proposed_by } }) : null);
    const evidence = c.evidence ? h('blockquote', { class: 'evidence small', testid: 'candidate-evidence' },
      h('span', { class: 'muted', i18n: 'cand_evidence' }), ' ', c.evidence,
      c.evidence_at ? h('span', { class: 'muted' }, ' · ' + MV.fmtDate(c.evidence_at)) : null) : null;
    const decided = c.status === 'pending' ? null : h('p', { class: 'muted small', testid: 'candidate-decided',
      i18n: 'cand_decided_' + c.status, vars: { as: c.accepted_as || '', at: MV.fmtDate(c.decided_at) } });
    const details = h('details', { class: 'ep-more' }, h('summary', { i18n: 'details' }),
      h('dl', { class: 'kv' }, row('field_id', c.id), row('field_path', c.path),
        row('field_importance', c.importance), row('field_category', c.category),
        row('field_sha256', c.sha256)));
    MV.append(node, [head, h('p', { class: 'ep-content', testid: 'candidate-text' }, c.text || ''),
      change(c), evidence, decided, details,
      c.status !== 'pending' ? null : (ui.editing === c.id ? editForm(c) : actions(c))]);
    return node;
  }

  function actions(c) {
    const bar = h('div', { class: 'actions row wrap' });
    MV.append(bar, [
      h('button', { type: 'button', class: 'btn btn-primary', testid: 'candidate-accept', i18n: 'cand_accept',
        onclick: () => decide(c, 'accept', bar) }),
      h('button', { type: 'button', class: 'btn', testid: 'candidate-edit', i18n: 'cand_edit_accept',
        onclick: () => { ui.editing = c.id; replaceCard(c); } }),
      h('button', { type: 'button', class: 'btn btn-danger', testid: 'candidate-reject', i18n: 'cand_reject',
        onclick: () => decide(c, 'reject', bar) })]);
    return bar;
  }

  /** Episode: the memory's text; profile change: the value that goes into the profile. */
  function editForm(c) {
    const profile = c.kind === 'profile';
    const field = profile
      ? h('input', { class: 'edit-value', testid: 'candidate-edit-value', autocomplete: 'off', 'aria-label': t('cand_value') })
      : h('textarea', { class: 'edit-content', testid: 'candidate-edit-text', rows: 4, 'aria-label': t('content') });
    field.value = (profile ? c.value : c.text) || '';
    const form = h('form', { class: 'edit-form stack', testid: 'candidate-edit-form' },
      h('label', null, h('span', { i18n: profile ? 'cand_value' : 'content' }), field),
      h('p', { class: 'muted small', i18n: 'cand_edit_hint' }),
      h('div', { class: 'row wrap' },
        h('button', { type: 'submit', class: 'btn btn-primary', testid: 'candidate-edit-save', i18n: 'cand_accept_edited' }),
        h('button', { type: 'button', class: 'btn', testid: 'candidate-edit-cancel', i18n: 'cancel',
          onclick: () => { ui.editing = null; replaceCard(c); } })));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      decide(c, 'accept', form, { [profile ? 'value' : 'text']: field.value });
    });
    setTimeout(() => { if (!form.contains(document.activeElement)) field.focus(); }, 0);
    return form;
  }

  async function decide(c, action, el, extra) {
    const seq = ui.seq;
    const body = Object.assign({ id: c.id, expected_sha256: c.sha256 }, extra || {});
    try {
      const done = await MV.busy(el, MV.call('/candidate/' + action, body));
      if (seq !== ui.seq) return;
      MV.hideError();
      const fresh = done.candidate;
      // Accepted as the memory that already said it: nothing new was written.
      MV.toast(done.duplicate_of ? t('create_duplicate', { id: done.duplicate_of.id })
        : t('cand_done_' + action, { id: c.id, as: fresh.accepted_as || '' }));
      // An accepted candidate is a new memory or a profile change: those panels reload.
      MV.markDirty(action === 'accept' ? ['episodes', 'profiles', 'history', 'audit', 'health']
        : ['history', 'audit', 'health']);
      if (action === 'accept') MV.refreshScopes();
      ui.editing = null;
      bump(c.status, fresh.status);
      replaceCard(fresh);
    } catch (err) {
      if (err === MV.STALE || seq !== ui.seq) return;
      if (!MV.isConflict(err)) return MV.fail(err);
      MV.showError(err, 'conflict_reloaded');
      load();
    }
  }

  function bump(from, to) {
    const counts = ui.data && ui.data.counts;
    if (!counts) return;
    counts[from] = Math.max(0, (counts[from] || 0) - 1);
    counts[to] = (counts[to] || 0) + 1;
    MV.tr(els.summary, 'cand_summary', { pending: counts.pending || 0,
      accepted: counts.accepted || 0, rejected: counts.rejected || 0 });
  }

  /** The card in place (a decided one stays, dimmed, until the list is reloaded). */
  function replaceCard(c) {
    if (ui.data && ui.data.items) ui.data.items = ui.data.items.map((old) => (old.id === c.id ? c : old));
    const old = els.list.querySelector('[data-testid="candidate-card"][data-id="' + CSS.escape(c.id) + '"]');
    if (!old) return render();
    const fresh = card(c);
    old.replaceWith(fresh);
    const focus = fresh.querySelector('.actions button') || fresh;
    if (ui.editing !== c.id) { if (focus === fresh) fresh.tabIndex = -1; focus.focus(); }
  }

  MV.panels = MV.panels || {};
  MV.panels.candidates = { needsScope: true, load, clear, render, build: () => { if (!root) build(); } };
})();
