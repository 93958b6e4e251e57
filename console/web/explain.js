/* A search result's score in the reader's language: the relevance chip, the one-line
 * summary (each list's rank and share, then the factors) and the full explain table.
 * Names come from i18n (explain_src_<list>, explain_<factor>, explain_part_<segment>); a
 * name the page does not know yet is shown as the server sent it. */
(function () {
  'use strict';
  const MV = window.MV;
  const { h, t } = MV;

  // The multiplied parts of the score, in the order indexer/retrieval/ranking.py applies them. Names:
  // "score" is the ranking number, "relevance" only the absolute one of the chip (explain.
  // absolute); the factor the JSON keys `relevance` (fusion's rank value, 1 for the top
  // result) is displayed as "fusion" (i18n explain_relevance / explain_part_relevance).
  const FACTORS = ['relevance', 'recency', 'priority', 'confidence', 'speaker', 'named_speaker', 'update'];

  const named = (prefix, name) => (MV.has(prefix + name) ? t(prefix + name) : name);

  /** Absolute relevance and whether it reaches the floor recall uses: the number is
   * explain.absolute.value with 3 decimals, as `memvault search --explain` prints it. */
  function chip(ep) {
    const abs = ep.explain && ep.explain.absolute;
    if (!abs || typeof abs.value !== 'number') return null;
    const vars = { value: abs.value.toFixed(3), floor: Number(abs.floor).toFixed(2) };
    // The message gate skipped the query (indexer.gate.rules): below whatever the value.
    const key = abs.gated ? 'relevance_gated' : (abs.passed ? 'relevance_passed' : 'relevance_below');
    return h('span', { class: 'chip ' + (abs.passed ? 'chip-ok' : 'chip-below'),
      testid: 'episode-relevance', 'data-passed': String(Boolean(abs.passed)),
      'data-gated': String(Boolean(abs.gated)), i18n: key, vars });
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

  function line(explain) {
    const parts = [];
    for (const [name, src] of Object.entries(explain.sources || {})) {
      if (!src || typeof src !== 'object') continue;
      const list = named('explain_src_', name);
      parts.push(src.rank == null
        ? h('span', { 'data-part': name, i18n: 'explain_absent', vars: { list } })
        : h('span', { 'data-part': name },
          t('explain_rank', { list, rank: src.rank }) + ' ',
          h('b', null, (src.contribution >= 0 ? '+' : '') + MV.fmtNum(src.contribution))));
    }
    for (const key of FACTORS) {
      if (typeof explain[key] !== 'number' || explain[key] === 1) continue;
      parts.push(h('span', { 'data-part': key },
        t('explain_factor', { factor: named('explain_', key), value: MV.fmtNum(explain[key]) })));
    }
    return parts.length ? h('div', { class: 'explain-line', testid: 'explain-summary' }, parts) : null;
  }

  function label(key) {
    return key.split('.').map((part) => named('explain_part_', part)).join(' › ');
  }

  function table(explain) {
    const rows = flatten(explain, '', []);
    const main = ['absolute', 'fusion', 'text', 'vector', ...FACTORS, 'score'];
    const first = rows.filter(([k]) => main.some((m) => k === m || k.startsWith(m + '.') || k.startsWith('sources.' + m + '.')));
    const rest = rows.filter((r) => !first.includes(r));
    const tr = ([key, value]) => h('tr', { 'data-key': key },
      h('th', { scope: 'row', title: key }, label(key)), h('td', null, MV.fmtNum(value)));
    return h('details', { class: 'explain', testid: 'explain' },
      h('summary', { testid: 'explain-toggle', i18n: 'why_score' }),
      h('table', { class: 'explain-table', testid: 'explain-table' },
        h('tbody', null, first.map(tr), rest.map(tr))));
  }

  /** Why a recall found nothing (indexer/retrieval/outcome.py: a snapshot's `why` or
   * `nothing_injected`, a recall test's) in the reader's language: i18n recall_why_<form>
   * with its numbers; a form this page does not know is shown in the server's English. */
  function why(reason, testid) {
    if (!reason || typeof reason !== 'object') return null;
    const form = typeof reason.form === 'string' ? reason.form : '';
    const props = { class: 'why', testid: testid || 'why', 'data-kind': String(reason.kind || '') };
    if (!form || !MV.has('recall_why_' + form)) {
      return h('span', props, String(reason.words || reason.kind || ''));
    }
    const num = (x) => (typeof x === 'number' ? x.toFixed(2) : '—');
    return h('span', Object.assign(props, { i18n: 'recall_why_' + form, vars: {
      detail: String(reason.detail || ''), best: num(reason.best), floor: num(reason.floor),
      count: Number(reason.count) || 0, budget: Number(reason.budget) || 0 } }));
  }

  MV.explain = { chip, line, table, why };
})();
