/* Events panel: the key events of the selected chat's bot, one person at a time.
 * A key event belongs to a person of a bot (not to a chat): the person list is every sender
 * of this bot with an events folder. Each event shows its type, status, summary, dates and
 * dated history; an open one can be closed with a resolution, sending the sha256 the page
 * showed as expected_sha256 (a file changed on disk since is refused with 409).
 * Below, the people linked across chats (/persons): link a sender id to a person, unlink
 * one; linking is the operator's decision, never made by the page on its own. */
(function () {
  'use strict';
  const MV = window.MV;
  const { h, t } = MV;

  const FILTERS = ['open', 'closed', 'all'];
  const ui = { people: null, speaker: null, status: 'open', data: null, seq: 0 };
  let root = null;
  let els = {};

  function build() {
    root = MV.$('#panel-events');
    const person = h('select', { id: 'events-person', testid: 'events-person' });
    person.addEventListener('change', () => { ui.speaker = person.value || null; loadEvents(); });
    const status = h('select', { id: 'events-status', testid: 'events-status-filter' },
      FILTERS.map((s) => h('option', { value: s, i18n: 'evt_filter_' + s })));
    status.addEventListener('change', () => { ui.status = status.value; loadEvents(); });
    els = {
      person, status,
      summary: h('p', { class: 'muted summary', testid: 'events-summary', 'aria-live': 'polite' }),
      problems: h('div', { testid: 'events-problems' }),
      list: h('div', { class: 'episode-list', testid: 'events-list' }),
      persons: h('section', { class: 'persons', testid: 'persons' }),
    };
    root.replaceChildren(
      h('p', { class: 'muted small', i18n: 'evt_help' }),
      h('div', { class: 'toolbar' }, els.summary,
        h('label', { class: 'inline-label', for: 'events-person' }, h('span', { i18n: 'evt_person' }), person),
        h('label', { class: 'inline-label', for: 'events-status' }, h('span', { i18n: 'status' }), status)),
      els.problems, els.list, els.persons);
  }

  function clear() {
    Object.assign(ui, { people: null, speaker: null, status: 'open', data: null });
    ui.seq++;
    if (!root) build();
    els.status.value = 'open';
    [els.person, els.summary, els.problems, els.list, els.persons].forEach((el) => el.replaceChildren());
  }

  async function load() {
    if (!root) build();
    const seq = ++ui.seq;
    els.list.setAttribute('aria-busy', 'true');
    try {
      const data = await MV.call('/events/people', {});
      if (seq !== ui.seq) return;
      ui.people = data.people || [];
      if (!ui.people.some((p) => p.speaker === ui.speaker)) {
        ui.speaker = ui.people.length ? ui.people[0].speaker : null;
      }
      renderPeople();
      loadPersons(seq);
      if (ui.speaker == null) { ui.data = null; render(); return; }
      await loadEvents(seq);
    } catch (err) {
      if (seq === ui.seq) MV.fail(err);
    } finally {
      if (seq === ui.seq) els.list.removeAttribute('aria-busy');
    }
  }

  async function loadEvents(given) {
    const seq = given || ++ui.seq;
    if (ui.speaker == null) return;
    try {
      const data = await MV.call('/events', { speaker: ui.speaker, status: ui.status });
      if (seq !== ui.seq) return;
      ui.data = data;
      render();
    } catch (err) {
      if (seq === ui.seq) MV.fail(err);
    }
  }

  function renderPeople() {
    const people = ui.people || [];
    els.person.replaceChildren(...people.map((p) => h('option', { value: p.speaker,
      testid: 'events-person-option', i18n: 'evt_person_option',
      vars: { speaker: p.speaker, open: p.open, closed: p.closed } })));
    els.person.disabled = !people.length;
    if (ui.speaker != null) els.person.value = ui.speaker;
  }

  function render() {
    if (!root) return;
    renderPeople();
    if (!ui.people || !ui.people.length) {
      els.summary.replaceChildren();
      els.problems.replaceChildren();
      els.list.replaceChildren(MV.emptyState('evt_no_people', 'events-empty'));
      return;
    }
    const data = ui.data;
    if (!data) return;
    const counts = data.counts || {};
    MV.tr(els.summary, 'evt_summary', { open: counts.open || 0, closed: counts.closed || 0 });
    const problems = data.problems || [];
    MV.fill(els.problems, problems.length ? h('ul', { class: 'problems warn small' }, problems.map((x) =>
      h('li', { testid: 'events-problem' }, (x.path || '?') + (x.line != null ? ':' + x.line : '') + ': ' + (x.message || '')))) : null);
    const items = data.items || [];
    els.list.replaceChildren(...items.map(card));
    if (!items.length) els.list.append(MV.emptyState('evt_none_' + ui.status, 'events-empty'));
  }

  function row(key, value, testid) {
    if (value == null || value === '') return null;
    return [h('dt', { i18n: key }), h('dd', { testid }, h('code', null, String(value)))];
  }

  function card(e) {
    const node = h('article', { class: 'card event status-' + e.status, testid: 'event-card',
      'data-id': e.id, 'data-status': e.status });
    const head = h('div', { class: 'ep-head' },
      h('span', { class: 'badge badge-' + (e.status === 'open' ? 'active' : 'archived'),
        testid: 'event-status', i18n: 'evt_status_' + e.status }),
      h('span', { class: 'chip', testid: 'event-type' }, e.type),
      h('span', { class: 'muted', title: e.opened_at || '', i18n: 'evt_opened',
        vars: { at: MV.fmtDate(e.opened_at), chat: e.opened_in || '—' } }),
      h('span', { class: 'muted', title: e.updated_at || '', i18n: 'evt_updated',
        vars: { at: MV.fmtDate(e.updated_at) } }));
    const resolution = e.status === 'closed' ? h('p', { class: 'muted small', testid: 'event-resolution',
      i18n: 'evt_closed_with', vars: { at: MV.fmtDate(e.closed_at), resolution: e.resolution || '—' } }) : null;
    const history = h('ol', { class: 'history small', testid: 'event-history' }, (e.history || []).map((x) =>
      h('li', { testid: 'event-history-entry', 'data-kind': x.kind },
        h('span', { class: 'muted', i18n: 'evt_kind_' + x.kind, vars: { at: MV.fmtDate(x.at), chat: x.chat || '—' } }),
        ' ', x.text || '')));
    const details = h('details', { class: 'ep-more' }, h('summary', { i18n: 'evt_history' }), history,
      h('dl', { class: 'kv' }, row('field_id', e.id), row('field_path', e.path), row('field_sha256', e.sha256)));
    MV.append(node, [head, h('p', { class: 'ep-content', testid: 'event-summary' }, e.summary || ''),
      resolution, details, e.status === 'open' ? closeForm(e) : null]);
    return node;
  }

  function closeForm(e) {
    const field = h('input', { class: 'edit-value', testid: 'event-resolution-input', autocomplete: 'off',
      'aria-label': t('evt_resolution') });
    const form = h('form', { class: 'row wrap', testid: 'event-close-form' },
      h('label', null, h('span', { i18n: 'evt_resolution' }), field),
      h('button', { type: 'submit', class: 'btn btn-primary', testid: 'event-close', i18n: 'evt_close' }));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      if (!field.value.trim()) { field.focus(); return; }
      closeEvent(e, field.value, form);
    });
    return form;
  }

  async function closeEvent(e, resolution, el) {
    const seq = ui.seq;
    try {
      await MV.busy(el, MV.call('/event/close', { speaker: ui.speaker, id: e.id, resolution,
        expected_sha256: e.sha256 }));
      if (seq !== ui.seq) return;
      MV.hideError();
      MV.toast(t('evt_done_close', { id: e.id }));
      MV.markDirty(['health']);
      load();
    } catch (err) {
      if (err === MV.STALE || seq !== ui.seq) return;
      if (!MV.isConflict(err)) return MV.fail(err);
      MV.showError(new Error(MV.errorText(err) + ' ' + t('conflict_reloaded')));
      load();
    }
  }

  // ------------------------------------------------------------------ linked people

  async function loadPersons(seq) {
    try {
      const data = await MV.call('/persons', {});
      if (seq === ui.seq) renderPersons(data);
    } catch (err) {
      if (seq === ui.seq) MV.fail(err);
    }
  }

  function renderPersons(data) {
    const persons = data.persons || [];
    const problems = data.problems || [];
    const list = persons.map((p) => h('article', { class: 'card', testid: 'person-card', 'data-id': p.id },
      h('div', { class: 'ep-head' }, h('strong', { testid: 'person-id' }, p.id),
        p.name ? h('span', { class: 'muted', testid: 'person-name' }, p.name) : null,
        h('code', { class: 'muted small' }, p.path)),
      h('ul', { class: 'row wrap small person-senders' }, p.senders.length ? p.senders.map((sender) =>
        h('li', { class: 'chip', testid: 'person-sender', 'data-sender': sender }, sender, ' ',
          h('button', { type: 'button', class: 'btn btn-small', testid: 'person-unlink',
            i18n: 'per_unlink', onclick: (event) => unlinkSender(sender, event.currentTarget) })))
        : [h('li', { class: 'muted', i18n: 'per_no_senders' })])));
    const sender = h('input', { class: 'edit-value', testid: 'person-link-sender', autocomplete: 'off',
      'aria-label': t('per_sender') });
    const person = h('input', { class: 'edit-value', testid: 'person-link-person', autocomplete: 'off',
      'aria-label': t('per_person') });
    const form = h('form', { class: 'row wrap', testid: 'person-link-form' },
      h('label', null, h('span', { i18n: 'per_sender' }), sender),
      h('label', null, h('span', { i18n: 'per_person' }), person),
      h('button', { type: 'submit', class: 'btn btn-primary', testid: 'person-link', i18n: 'per_link' }));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      if (!sender.value.trim()) { sender.focus(); return; }
      if (!person.value.trim()) { person.focus(); return; }
      linkSender(sender.value.trim(), person.value.trim(), form);
    });
    MV.fill(els.persons, h('h3', { i18n: 'per_title' }), h('p', { class: 'muted small', i18n: 'per_help' }),
      problems.length ? h('ul', { class: 'problems warn small' }, problems.map((x) =>
        h('li', { testid: 'person-problem' }, (x.path || '?') + ':' + (x.line || 1) + ': ' + (x.message || '')))) : null,
      list.length ? list : MV.emptyState('per_none', 'persons-empty'), form);
  }

  async function linkSender(sender, person, el) {
    const seq = ui.seq;
    try {
      await MV.busy(el, MV.call('/person/link', { sender, person }));
      if (seq !== ui.seq) return;
      MV.hideError();
      MV.toast(t('per_done_link', { sender, person }));
      loadPersons(seq);
    } catch (err) {
      if (err !== MV.STALE && seq === ui.seq) MV.fail(err);
    }
  }

  async function unlinkSender(sender, el) {
    const seq = ui.seq;
    try {
      await MV.busy(el, MV.call('/person/unlink', { sender }));
      if (seq !== ui.seq) return;
      MV.hideError();
      MV.toast(t('per_done_unlink', { sender }));
      loadPersons(seq);
    } catch (err) {
      if (err !== MV.STALE && seq === ui.seq) MV.fail(err);
    }
  }

  MV.panels = MV.panels || {};
  MV.panels.events = { needsScope: true, load, clear, render, build: () => { if (!root) build(); } };
})();
