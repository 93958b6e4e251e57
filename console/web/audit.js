/* Audit panel: the chat's audit.jsonl, newest first, a page at a time (panels.js MV.panel). */
(function () {
  'use strict';
  const MV = window.MV;
  const { h, t } = MV;
  const panel = MV.panel;

  const AUDIT_PAGE = 50;
  panel('audit', true, {
    state: () => ({ page: 1, loaded: false }),
    build(p) {
      p.tools = h('div', { class: 'toolbar' });
      p.table = h('div', { class: 'table-wrap', testid: 'audit-table' });
      p.pager = h('nav', { class: 'pager', 'aria-label': t('pages') });
      p.problems = h('div', { testid: 'audit-problems' });
      p.tools.append(MV.jsonTools('audit', () => 'audit-' + (MV.state.scope ? MV.state.scope.session : 'scope') + '.json',
        () => exportAudit()));
      p.root.replaceChildren(p.tools, p.problems, p.table, p.pager);
    },
    clear(p) { p.table.replaceChildren(); p.pager.replaceChildren(); p.problems.replaceChildren(); },
    load(p) { return p.fetch(() => MV.call('/audit', { page: p.ui.page, page_size: AUDIT_PAGE })); },
    render(p) {
      const data = p.ui.data;
      const items = data.items || [];
      const head = ['timestamp', 'operation', 'target', 'summary', 'source'];
      MV.fill(p.table, items.length ? [
        // The summaries are the log's own words (vault.files.audit), shown as written: said once here.
        h('p', { class: 'muted small', testid: 'audit-recorded-note', i18n: 'audit_recorded_note' }),
        h('table', { class: 'grid audit-grid' },
          h('thead', null, h('tr', null, head.map((k) => h('th', { scope: 'col', i18n: 'audit_' + k })))),
          h('tbody', null, items.map(auditRow)))]
        : MV.emptyState('no_audit', 'audit-empty'));
      MV.fill(p.problems, (data.problems || []).length ? [h('ul', { class: 'problems' },
        data.problems.map((x) => h('li', { testid: 'audit-problem' }, 'audit.jsonl:' + x.line + ': ' + x.message)))] : []);
      const pages = Math.max(1, data.pages || 1);
      const go = (page) => () => { p.ui.page = page; p.load(); };
      MV.fill(p.pager,
        h('button', { type: 'button', class: 'btn', testid: 'audit-prev', i18n: 'previous', disabled: p.ui.page <= 1, onclick: go(p.ui.page - 1) }),
        h('span', { class: 'muted', i18n: 'page_of', vars: { page: data.page || p.ui.page, pages } }),
        h('span', { class: 'muted' }, ' · ' + t('n_entries', { n: data.total || 0 })),
        h('button', { type: 'button', class: 'btn', testid: 'audit-next', i18n: 'next', disabled: p.ui.page >= pages, onclick: go(p.ui.page + 1) }));
    },
  });

  /** One audit line: the fixed vocabularies (operation, target type, source) in the reader's
   * language with the logged value in their title; on a narrow panel each row is a card whose
   * cells name their column (data-label, app.css). */
  function auditRow(a) {
    const cell = (key, ...content) => h('td', { class: 'audit-' + key, 'data-label': t('audit_' + key) },
      h('div', { class: 'cell', testid: 'audit-' + key }, ...content));
    return h('tr', { testid: 'audit-row', 'data-operation': a.operation },
      cell('timestamp', h('span', { title: a.timestamp || '' }, MV.fmtDate(a.timestamp))),
      cell('operation', MV.named('audit_op_', a.operation, { class: 'audit-op' })),
      cell('target', MV.named('audit_target_', a.target_type), ' ', h('code', null, a.target_id || '')),
      cell('summary', a.summary || ''),
      cell('source', MV.named('source_', a.source),
        a.query_id != null ? h('span', { class: 'muted small' }, ' #' + a.query_id) : null));
  }

  async function exportAudit() {
    const scope = MV.scopeBody();
    const items = [];
    let problems = [];
    for (let page = 1; page <= 500; page++) {
      const data = await MV.call('/audit', { page, page_size: 200 });
      items.push(...(data.items || []));
      problems = data.problems || problems;
      if (page >= (data.pages || 1)) break;
    }
    return JSON.stringify({ scope, exported_at: new Date().toISOString(), items, problems }, null, 2);
  }
})();
