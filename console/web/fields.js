/* Synapse's fields in the Episodes panel (issue 14): the filter bar of the list and the search,
 * the "new memory" form, and the extra inputs of the edit form (category, key, priority,
 * expiry, confidence). Values go to the server as typed; it checks them by the vault's own
 * rules (console/endpoints_fields.py) and its message says what to fix, as the CLI's does. */
(function () {
  'use strict';
  const MV = window.MV;
  const { h, t } = MV;

  const CATEGORIES = ['identity', 'preference', 'fact', 'project', 'skill', 'mistake', 'context',
    'note', 'event', 'plan'];
  const PRIORITIES = ['low', 'normal', 'high', 'critical'];
  const EXPIRING = ['1d', '7d', '30d'];
  // "7d" is a duration from now (expires_in); anything else is a date (expires_at).
  const DURATION = /^\s*\d+\s*[mhdw]\s*$/i;

  function splitTags(text) {
    return String(text || '').split(/[,，]/).map((s) => s.trim().replace(/^#/, '')).filter(Boolean);
  }

  function choice(testid, label, values, blank, keyOf) {
    return h('select', { testid, 'aria-label': t(label) },
      blank ? h('option', { value: '', i18n: blank }) : null,
      values.map((v) => h('option', keyOf ? { value: v, i18n: keyOf(v) } : { value: v, text: v })));
  }

  const priorityKey = (p) => 'priority_' + p;
  const categoryKey = (c) => 'category_' + c;

  function labelled(key, control) {
    return h('label', { class: 'inline-label' }, h('span', { i18n: key }), control);
  }

  /** The filter controls; `onChange` runs after any of them changed. body(): what /episodes
   * and /search take (only the filters that are set). */
  function filterBar(onChange) {
    const tag = h('input', { type: 'search', testid: 'filter-tag', 'data-i18n-attr': 'placeholder',
      i18n: 'filter_tag_hint', autocomplete: 'off', 'aria-label': t('filter_tag') });
    const category = choice('filter-category', 'field_category', CATEGORIES, 'filter_any', categoryKey);
    const priority = choice('filter-priority', 'field_priority', PRIORITIES, 'filter_any', priorityKey);
    const verified = h('select', { testid: 'filter-verified', 'aria-label': t('filter_verified') },
      h('option', { value: '', i18n: 'filter_any' }),
      h('option', { value: 'yes', i18n: 'filter_verified_yes' }),
      h('option', { value: 'no', i18n: 'filter_verified_no' }));
    const expiring = choice('filter-expiring', 'filter_expiring', EXPIRING, 'filter_any',
      (d) => 'filter_expiring_' + d);
    const controls = [tag, category, priority, verified, expiring];
    for (const el of controls) el.addEventListener('change', onChange);
    const node = h('div', { class: 'filter-bar row wrap', testid: 'episode-filters' },
      labelled('filter_tag', tag), labelled('field_category', category),
      labelled('field_priority', priority), labelled('filter_verified', verified),
      labelled('filter_expiring', expiring));
    return {
      node,
      body() {
        const out = {};
        const tags = splitTags(tag.value);
        if (tags.length) out.tags = tags;
        if (category.value) out.category = category.value;
        if (priority.value) out.priority = priority.value;
        if (verified.value) out.verified = verified.value === 'yes';
        if (expiring.value) out.expiring_within = expiring.value;
        return out;
      },
      reset() { for (const el of controls) el.value = ''; },
    };
  }

  /** Category, key, priority, expiry and confidence inputs, filled from `ep` (null = new).
   * collect(): the body fields (for an edit only those that changed; blank clears). */
  function fieldInputs(ep) {
    const old = ep || {};
    const category = choice('field-category', 'field_category', CATEGORIES, 'field_none', categoryKey);
    category.value = old.category || '';
    const key = h('input', { testid: 'field-key', autocomplete: 'off', 'aria-label': t('field_key') });
    key.value = old.key || '';
    const priority = choice('field-priority', 'field_priority', PRIORITIES,
      ep ? null : 'priority_default', priorityKey);
    priority.value = old.priority || '';
    const expires = h('input', { testid: 'field-expires', autocomplete: 'off',
      'data-i18n-attr': 'placeholder', i18n: 'expires_hint', 'aria-label': t('field_expires_at') });
    expires.value = old.expires_at || '';
    const confidence = h('input', { type: 'number', min: '0', max: '1', step: '0.05',
      testid: 'field-confidence', 'aria-label': t('field_confidence') });
    confidence.value = old.confidence == null ? '' : String(old.confidence);
    const nodes = [labelled('field_category', category), labelled('field_key', key),
      labelled('field_priority', priority), labelled('field_expires_at', expires),
      labelled('field_confidence', confidence)];

    function collect() {
      const out = {};
      const typed = { category: category.value, key: key.value.trim(), priority: priority.value };
      for (const [name, value] of Object.entries(typed)) {
        if (ep ? value !== (old[name] || '') : value) out[name] = value;
      }
      const conf = confidence.value.trim();
      if (ep ? conf !== (old.confidence == null ? '' : String(old.confidence)) : conf) out.confidence = conf;
      const when = expires.value.trim();
      if (ep ? when !== (old.expires_at || '') : when) {
        if (DURATION.test(when)) out.expires_in = when;
        else out.expires_at = when || null;
      }
      return out;
    }
    return { nodes: h('div', { class: 'field-grid row wrap' }, nodes), collect };
  }

  /** The "new memory" form; `onCreated(E)` runs after the server wrote it. */
  function createForm(onCreated, onCancel) {
    const area = h('textarea', { testid: 'create-content', rows: 3, 'aria-label': t('content') });
    const tags = h('input', { testid: 'create-tags', autocomplete: 'off', 'aria-label': t('tags_hint') });
    // Who said it and how much it matters, as `memvault remember --speaker/--speaker-name/
    // --importance` take them (the server checks them by the same rules).
    const speakerId = h('input', { testid: 'create-speaker-id', autocomplete: 'off',
      'data-i18n-attr': 'placeholder', i18n: 'speaker_id_placeholder', 'aria-label': t('speaker') });
    const speakerName = h('input', { testid: 'create-speaker-name', autocomplete: 'off',
      'data-i18n-attr': 'placeholder', i18n: 'speaker_name_placeholder', 'aria-label': t('field_name') });
    const importance = h('select', { testid: 'create-importance', 'aria-label': t('field_importance') },
      [1, 2, 3, 4, 5].map((n) => h('option', { value: String(n), text: String(n) })));
    importance.value = '2';
    const fields = fieldInputs(null);
    const form = h('form', { class: 'create-form card stack', testid: 'episode-create-form' },
      h('label', null, h('span', { i18n: 'content' }), area),
      h('label', null, h('span', { i18n: 'tags_hint' }), tags),
      h('div', { class: 'field-grid row wrap' }, labelled('speaker', speakerId),
        labelled('field_name', speakerName), labelled('field_importance', importance)),
      fields.nodes,
      h('div', { class: 'row' },
        h('button', { type: 'submit', class: 'btn btn-primary', testid: 'create-save', i18n: 'save' }),
        h('button', { type: 'button', class: 'btn', testid: 'create-cancel', i18n: 'cancel',
          onclick: onCancel })));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const body = Object.assign({ content: area.value, tags: splitTags(tags.value),
        importance: Number(importance.value) }, fields.collect());
      if (speakerId.value.trim()) body.speaker_id = speakerId.value.trim();
      if (speakerName.value.trim()) body.speaker_name = speakerName.value.trim();
      try {
        const made = await MV.busy(form, MV.call('/episode/create', body));
        MV.hideError();
        // The chat already remembers it: nothing was written, `made` is that memory.
        MV.toast(t(made.duplicate_of ? 'create_duplicate' : 'done_create', { id: made.id }));
        MV.markDirty(['history', 'audit', 'health']);
        onCreated(made);
      } catch (err) {
        MV.fail(err);
      }
    });
    setTimeout(() => { if (!form.contains(document.activeElement)) area.focus(); }, 0);
    return form;
  }

  MV.fields = { filterBar, fieldInputs, createForm, splitTags };
})();
