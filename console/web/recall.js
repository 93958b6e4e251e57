/* The recall test (Injection tab): type a message as a speaker of the selected chat and see
 * the blocks the injector would place for it, from /recall/test, which runs the very code a
 * real turn runs (indexer/injection/turn.py) and records nothing. */
(function () {
  'use strict';
  const MV = window.MV;
  const { h, t } = MV;

  function build() {
    const ui = { seq: 0, data: null, speakers: [] };
    const list = h('datalist', { id: 'recall-speakers', testid: 'recall-speakers' });
    const speaker = h('input', { id: 'recall-speaker', testid: 'recall-speaker', list: 'recall-speakers',
      autocomplete: 'off', spellcheck: 'false', 'data-i18n-attr': 'placeholder', i18n: 'recall_speaker_placeholder' });
    const name = h('input', { id: 'recall-speaker-name', testid: 'recall-speaker-name', autocomplete: 'off',
      spellcheck: 'false' });
    const text = h('textarea', { id: 'recall-text', testid: 'recall-text', rows: 3, maxlength: 4000,
      'data-i18n-attr': 'placeholder', i18n: 'recall_text_placeholder' });
    const result = h('div', { class: 'stack', testid: 'recall-result', 'aria-live': 'polite' });
    // The speaker's name as their profile in this chat has it (what the host would send).
    speaker.addEventListener('change', () => {
      const known = ui.speakers.find((s) => s.id === speaker.value.trim());
      if (known && known.name) name.value = known.name;
    });
    const form = h('form', { class: 'stack', testid: 'recall-test-form' },
      h('p', { class: 'muted', i18n: 'recall_test_help' }),
      h('div', { class: 'row' },
        h('label', { for: 'recall-speaker' }, h('span', { i18n: 'recall_speaker' }), speaker, list),
        h('label', { for: 'recall-speaker-name' }, h('span', { i18n: 'recall_speaker_name' }), name)),
      h('label', { for: 'recall-text', i18n: 'recall_text' }), text,
      h('div', null, h('button', { type: 'submit', class: 'btn btn-primary', testid: 'recall-run', i18n: 'recall_run' })));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const seq = ++ui.seq;
      const body = { text: text.value };
      if (speaker.value.trim()) body.speaker = speaker.value.trim();
      if (name.value.trim()) body.speaker_name = name.value.trim();
      try {
        const data = await MV.busy(form, MV.call('/recall/test', body));
        if (seq !== ui.seq) return;
        MV.hideError();
        ui.data = data;
        self.render();
      } catch (err) { if (seq === ui.seq) MV.fail(err); }
    });
    const root = h('section', { class: 'card', testid: 'recall-test' },
      h('h3', { i18n: 'recall_test_title' }), form, result);

    const self = {
      root,
      clear() { ui.seq += 1; ui.data = null; ui.speakers = []; list.replaceChildren(); result.replaceChildren(); },
      /** The chat's speakers (their profiles) for the speaker box. */
      async load() {
        const seq = ui.seq;
        try {
          const profiles = await MV.call('/profiles', {});
          if (seq !== ui.seq) return;
          ui.speakers = (profiles.speakers || []).map((s) => ({ id: String(s.speaker || ''),
            name: String((s.profile && s.profile.name) || '') })).filter((s) => s.id);
          list.replaceChildren(...ui.speakers.map((s) => h('option', { value: s.id }, s.name)));
        } catch (err) { MV.fail(err); }
      },
      render() { if (ui.data) result.replaceChildren(...answer(ui.data)); },
    };
    return self;
  }

  function answer(data) {
    const out = [];
    const verdict = [data.gate, data.floor].filter(Boolean).join('; ');
    if (verdict) out.push(h('p', { class: 'small' }, h('b', { i18n: 'recall_verdict' }), ' ',
      h('span', { testid: 'recall-verdict' }, verdict)));
    if (data.nothing_injected) {
      out.push(h('p', { class: 'warn', testid: 'recall-nothing' }, h('b', { i18n: 'nothing_injected' }), ': ',
        MV.explain.why(data.nothing_injected, 'recall-why')));
    } else if (data.why) {
      out.push(h('p', { class: 'muted', testid: 'recall-nothing' }, h('b', { i18n: 'nothing_recalled' }), ': ',
        MV.explain.why(data.why, 'recall-why')));
    }
    if (data.command) out.push(h('p', { class: 'muted', i18n: 'recall_command' }));
    const blocks = Array.isArray(data.blocks) ? data.blocks : [];
    out.push(blocks.length
      ? h('ol', { class: 'stack recall-blocks', testid: 'recall-blocks' }, blocks.map((b) =>
        h('li', { testid: 'recall-block', 'data-block': String(b.block) },
          h('p', { class: 'small' }, h('b', null, t('block_' + b.block)), ' → ', h('code', null, String(b.target)),
            ' ', h('span', { class: 'muted', i18n: 'recall_chars', vars: { n: b.chars } })),
          h('pre', { class: 'block-text', testid: 'recall-block-text' }, String(b.text)))))
      : MV.emptyState('recall_no_blocks', 'recall-no-blocks'));
    const ids = (key, values) => (Array.isArray(values) && values.length
      ? [h('dt', { i18n: key }), h('dd', { 'data-key': key }, values.map((id) => h('code', { class: 'small' }, String(id) + ' ')))]
      : null);
    const s = data.settings || {};
    out.push(h('dl', { class: 'kv small', testid: 'recall-facts' },
      ids('recall_recalled', data.recalled_ids), ids('recall_placed', data.episode_ids),
      ids('recall_critical', data.critical_ids), ids('recall_events', data.event_ids),
      h('dt', { i18n: 'recall_settings' }),
      h('dd', { testid: 'recall-settings', 'data-from': String(data.settings_from || '') },
        h('span', { i18n: 'recall_settings_line', vars: { top_k: s.top_k, floor: Number(s.relevance_floor).toFixed(2),
          gate: String(s.recall_gate), budget: s.injection_chars } }), ' (',
        h('span', { i18n: 'recall_from_' + String(data.settings_from || 'defaults') }), ')')));
    out.push(h('p', { class: 'muted small', testid: 'recall-note', i18n: 'recall_not_recorded' }));
    return out;
  }

  MV.recallTest = { build };
})();
