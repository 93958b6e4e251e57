/* Profiles panel: the chat's profile and each speaker's profile, editable field by field.
 * Every update sends the sha256 the page showed; a conflict reloads the panel with what is on
 * disk and puts back what the person had typed into the card's fields. */
(function () {
  'use strict';
  const MV = window.MV;
  const { h, t } = MV;

  const KNOWN = new Set(['name', 'traits', 'preferences', 'notes', 'updated_at', 'history']);
  const ui = { data: null, added: [], seq: 0 };
  let root = null;
  let els = {};

  function build() {
    root = MV.$('#panel-profiles');
    const speakerInput = h('input', { id: 'new-speaker', testid: 'new-speaker-input', autocomplete: 'off',
      spellcheck: 'false', 'data-i18n-attr': 'placeholder', i18n: 'speaker_id_placeholder' });
    const addForm = h('form', { class: 'row wrap add-speaker', testid: 'new-speaker-form' },
      h('label', { for: 'new-speaker', i18n: 'add_speaker_profile' }), speakerInput,
      h('button', { type: 'submit', class: 'btn', testid: 'new-speaker-add', i18n: 'add' }));
    addForm.addEventListener('submit', (event) => {
      event.preventDefault();
      const id = speakerInput.value.trim();
      if (!id || !ui.data) return;
      const known = profiles().some((p) => p.speaker === id);
      if (!known) {
        ui.added.push({ speaker: id, path: '', exists: false, sha256: null, profile: {}, problem: null });
      }
      speakerInput.value = '';
      render();
      const target = root.querySelector('[data-testid="profile-card"][data-speaker="' + CSS.escape(id) + '"] input');
      if (target) target.focus();
    });
    els = { list: h('div', { class: 'profile-list', testid: 'profile-list' }), addForm };
    root.replaceChildren(els.list, addForm);
  }

  function clear() {
    ui.data = null;
    ui.added = [];
    ui.seq++;
    if (!root) build();
    els.list.replaceChildren();
  }

  async function load() {
    if (!root) build();
    const seq = ++ui.seq;
    let done = false;
    els.list.setAttribute('aria-busy', 'true');
    try {
      const data = await MV.call('/profiles', {});
      if (seq !== ui.seq) return;
      ui.data = data;
      const have = new Set(profiles(true).map((p) => p.speaker));
      ui.added = ui.added.filter((p) => !have.has(p.speaker));
      render();
      done = true;
    } catch (err) {
      if (seq === ui.seq) MV.fail(err);
    } finally {
      if (seq === ui.seq) els.list.removeAttribute('aria-busy');
    }
    return done;
  }

  function profiles(serverOnly) {
    if (!ui.data) return [];
    const list = [ui.data.session].concat(ui.data.speakers || []).filter(Boolean);
    return serverOnly ? list : list.concat(ui.added);
  }

  function render() {
    if (!root || !ui.data) return;
    // Keep the keyboard focus on the same control of the same card across a re-render.
    const active = document.activeElement;
    const where = active && els.list.contains(active) ? active.closest('[data-testid="profile-card"]') : null;
    const speaker = where ? where.dataset.speaker : null;
    const testid = where ? active.getAttribute('data-testid') : null;
    els.list.replaceChildren(...profiles().map(card));
    if (where && testid) {
      const cardNode = els.list.querySelector('[data-testid="profile-card"][data-speaker="' + CSS.escape(speaker) + '"]');
      const again = cardNode && cardNode.querySelector('[data-testid="' + CSS.escape(testid) + '"]:not([disabled])');
      if (again) again.focus();
    }
  }

  function title(p) {
    if (p.speaker == null) return h('h3', { i18n: 'chat_profile' });
    const name = p.profile && p.profile.name;
    return h('h3', null, h('span', { i18n: 'speaker' }), ' ', h('code', null, p.speaker),
      name ? h('span', { class: 'muted' }, ' · ' + name) : null);
  }

  function card(p) {
    const prof = p.profile || {};
    const locked = !!p.problem;
    const node = h('section', { class: 'card profile', testid: 'profile-card', 'data-speaker': p.speaker == null ? '' : p.speaker },
      h('header', { class: 'profile-head' }, title(p),
        h('div', { class: 'small muted' },
          h('span', { i18n: 'file' }), ' ',
          h('code', { testid: 'profile-path' }, p.path || '—'), ' · ',
          p.exists ? h('span', { title: p.sha256 || '' }, 'sha256 ' + MV.short(p.sha256))
            : h('span', { testid: 'profile-missing', i18n: 'file_not_created' }))),
      locked ? h('p', { class: 'problem', testid: 'profile-problem' }, h('strong', { i18n: 'file_problem' }), ' ', p.problem) : null);
    const edit = (field, action, value, el) => update(p, field, action, value, el);

    // name
    const nameInput = h('input', { id: uid('name', p), testid: 'profile-name-input', value: prof.name || '',
      disabled: locked, autocomplete: 'off' });
    const nameForm = h('form', { class: 'field row' },
      h('label', { for: nameInput.id, i18n: 'field_name' }), nameInput,
      h('button', { type: 'submit', class: 'btn', testid: 'profile-name-save', i18n: 'save', disabled: locked }));
    nameForm.addEventListener('submit', (e) => { e.preventDefault(); edit('name', 'set', nameInput.value.trim(), nameForm); });
    node.append(nameForm);

    for (const field of ['traits', 'preferences']) node.append(listField(p, field, prof[field] || [], locked, edit));

    // notes
    const notes = h('textarea', { id: uid('notes', p), testid: 'profile-notes-input', rows: 3, disabled: locked });
    notes.value = prof.notes || '';
    const notesForm = h('form', { class: 'field stack' },
      h('label', { for: notes.id, i18n: 'field_notes' }), notes,
      h('div', null, h('button', { type: 'submit', class: 'btn', testid: 'profile-notes-save', i18n: 'save', disabled: locked })));
    notesForm.addEventListener('submit', (e) => { e.preventDefault(); edit('notes', 'set', notes.value, notesForm); });
    node.append(notesForm);

    if (prof.updated_at) {
      node.append(h('p', { class: 'small muted' }, h('span', { i18n: 'updated_at' }), ' ', MV.fmtDate(prof.updated_at)));
    }
    if ((prof.history || []).length) node.append(historyBox(prof.history));
    // Unknown fields of the file (`extra`), kept as written and shown read-only.
    const extra = Object.assign({}, prof.extra && typeof prof.extra === 'object' ? prof.extra : {});
    Object.keys(prof).filter((k) => !KNOWN.has(k) && k !== 'extra').forEach((k) => { extra[k] = prof[k]; });
    if (Object.keys(extra).length) {
      node.append(h('details', { class: 'small' }, h('summary', { i18n: 'other_fields' }),
        h('pre', { class: 'code-block', testid: 'profile-other' }, JSON.stringify(extra, null, 2))));
    }
    return node;
  }

  let counter = 0;
  function uid(field, p) { counter += 1; return 'pf-' + field + '-' + counter + (p.speaker ? '' : '-s'); }

  function listField(p, field, items, locked, edit) {
    const box = h('fieldset', { class: 'field list-field', testid: 'profile-' + field },
      h('legend', { i18n: 'field_' + field }));
    const ul = h('ul', { class: 'items' });
    for (const item of items) {
      const li = h('li', { testid: 'profile-item' }, h('span', { class: 'item-text' }, String(item)));
      li.append(h('button', { type: 'button', class: 'btn btn-small', testid: 'profile-remove', disabled: locked,
        'aria-label': t('remove_item', { item: String(item) }), i18n: 'remove',
        onclick: () => edit(field, 'remove', item, li) }));
      ul.append(li);
    }
    if (!items.length) ul.append(h('li', { class: 'muted', i18n: 'none' }));
    const input = h('input', { id: uid(field, p), testid: 'profile-' + field + '-input', disabled: locked,
      autocomplete: 'off', 'data-i18n-attr': 'placeholder', i18n: 'slot_hint' });
    const form = h('form', { class: 'row' },
      h('label', { class: 'visually-hidden', for: input.id, i18n: 'add_' + field }), input,
      h('button', { type: 'submit', class: 'btn', testid: 'profile-' + field + '-add', i18n: 'add', disabled: locked }));
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      if (input.value.trim()) edit(field, 'add', input.value.trim(), form);
    });
    box.append(ul, form);
    return box;
  }

  function historyBox(history) {
    return h('details', { class: 'small profile-history' }, h('summary', { i18n: 'slot_history' }),
      h('ul', null, history.map((entry) => h('li', null,
        h('code', null, String(entry.key == null ? '' : entry.key)), ': ', String(entry.value == null ? '' : entry.value),
        h('span', { class: 'muted' }, ' · ' + MV.fmtDate(entry.until) + (entry.reason ? ' · ' + entry.reason : ''))))));
  }

  async function update(p, field, action, value, el) {
    const seq = ui.seq;
    const body = { field, action, value, expected_sha256: p.exists ? p.sha256 : null };
    if (p.speaker != null) body.speaker = p.speaker;
    try {
      const fresh = await MV.busy(el, MV.call('/profile/update', body));
      if (seq !== ui.seq) return;
      MV.hideError();
      replace(p, fresh, field);
      MV.toast(t('profile_saved', { path: fresh.path || '' }));
      MV.markDirty(['history', 'audit', 'health']);
      MV.refreshScopes();
    } catch (err) {
      if (err === MV.STALE || seq !== ui.seq) return;
      if (!MV.isConflict(err)) return MV.fail(err);
      MV.showError(err, 'conflict_typed_kept');
      const typed = typedIn(p.speaker);
      if (await load()) putBack(p.speaker, typed);
    }
  }

  /** What the person typed into a card's fields (all, or all but one field's). */
  function typedIn(speaker, except) {
    return MV.typed(cardOf(speaker), (id) => !!except && id.includes('-' + except + '-'));
  }

  function putBack(speaker, typed) { MV.putTyped(cardOf(speaker), typed); }

  function cardOf(speaker) {
    return els.list.querySelector('[data-testid="profile-card"][data-speaker="' + CSS.escape(speaker == null ? '' : speaker) + '"]');
  }

  /** Re-render after a save; what the person typed in the card's other fields is kept. */
  function replace(old, fresh, field) {
    const typed = typedIn(old.speaker, field);
    if (ui.data.session === old) ui.data.session = fresh;
    else if (ui.added.includes(old)) {
      ui.added = ui.added.filter((x) => x !== old);
      ui.data.speakers = (ui.data.speakers || []).concat([fresh]);
    } else {
      ui.data.speakers = (ui.data.speakers || []).map((x) => (x === old ? fresh : x));
    }
    render();
    putBack(fresh.speaker, typed);
  }

  MV.panels = MV.panels || {};
  MV.panels.profiles = { needsScope: true, load, clear, render, build: () => { if (!root) build(); } };
})();
