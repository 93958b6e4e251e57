/* Health panel: the red / amber / green cards of /health in the reader's language.
 * Each card line comes with a code and its parameters (vault/format/findings.py): the message is
 * i18n `health_<code>` (or the `key` the line names); a line the page has no message for
 * (a host's own warning) is shown as the server wrote it. */
(function () {
  'use strict';
  const MV = window.MV;
  const { h, t } = MV;

  const LEVELS = { green: 'level_green', amber: 'level_amber', red: 'level_red' };

  function lineOf(card, line) {
    const key = line.key || 'health_' + line.code;
    const props = { class: 'health-line level-' + (line.level || card.level), testid: 'health-line',
      'data-code': line.code || '' };
    if (!MV.has(key)) return h('p', props, line.message || '');
    return h('p', Object.assign(props, { i18n: key, vars: line.params || {} }));
  }

  /** The lines of a card; an answer without `lines` (an older server) shows its `detail`. */
  function linesOf(card) {
    if (Array.isArray(card.lines)) return card.lines;
    const detail = Array.isArray(card.detail) ? card.detail : [card.detail || ''];
    return detail.map((message) => ({ code: '', message }));
  }

  function cardOf(c) {
    const title = c.title_key && MV.has(c.title_key) ? h('span', { i18n: c.title_key }) : (c.title || c.id);
    return h('article', { class: 'card health-card level-' + c.level, testid: 'health-card',
      'data-id': c.id, 'data-level': c.level },
    h('h3', null, h('span', { class: 'dot', 'aria-hidden': 'true' }), ' ', title,
      h('span', { class: 'visually-hidden' }, ' (' + t(LEVELS[c.level] || 'level_unknown') + ')')),
    h('div', { class: 'small health-detail', testid: 'health-detail' }, linesOf(c).map((l) => lineOf(c, l))));
  }

  MV.panel('health', false, {
    state: () => ({ loaded: false }),
    build(p) {
      p.overall = h('div', { testid: 'health-overall' });
      p.cards = h('div', { class: 'health-cards', testid: 'health-cards' });
      p.problems = h('div', { testid: 'health-problems' });
      p.root.replaceChildren(p.overall, p.cards, p.problems);
    },
    clear(p) { p.overall.replaceChildren(); p.cards.replaceChildren(); p.problems.replaceChildren(); },
    load(p) {
      return p.fetch(() => (MV.state.scope ? MV.call('/health', {}) : MV.apiUnscoped('/health', {})));
    },
    render(p) {
      const data = p.ui.data;
      MV.fill(p.overall, h('p', { class: 'health-level level-' + data.level, 'data-level': data.level },
        h('span', { class: 'dot', 'aria-hidden': 'true' }), h('span', { i18n: LEVELS[data.level] || 'level_unknown' }),
        MV.state.scope ? null : h('span', { class: 'muted small', i18n: 'health_no_scope' })));
      MV.fill(p.cards, (data.cards || []).map(cardOf));
      const problems = data.problems || [];
      MV.fill(p.problems, h('h3', { i18n: 'problems' }), problems.length
        ? h('ul', { class: 'problems' }, problems.map((x) => h('li', { testid: 'health-problem' },
          h('code', null, (x.path || '?') + (x.line != null ? ':' + x.line : '') + ':'), ' ', x.message || '')))
        : MV.emptyState('no_problems', 'health-no-problems'));
    },
  });
})();
