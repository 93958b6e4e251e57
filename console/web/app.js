/* Memory Console: state, scope sidebar, derive box, tabs, start-up.
 * Runs on LangBot's page SDK or on standalone-sdk.js (same window.langbot API). */
(function () {
  'use strict';
  const MV = window.MV;
  const { h, t } = MV;

  const TABS = ['episodes', 'profiles', 'candidates', 'events', 'history', 'injection', 'audit', 'transfer', 'health'];
  const state = (MV.state = { meta: null, scopes: null, scope: null, isolation: 'session', gen: 0,
    tab: 'episodes', dirty: new Set(TABS), scopesSeq: 0 });
  const STALE = (MV.STALE = Object.freeze({ stale: true, message: 'stale answer' }));

  // ------------------------------------------------------------------ calls
  MV.api = (endpoint, body) => window.langbot.api(endpoint, body || {}, 'POST');
  MV.scopeBody = () => ({ bot: state.scope.bot, session: state.scope.session, isolation: state.isolation });

  function guarded(promise, gen) {
    return promise.then(
      (data) => { if (gen !== state.gen) throw STALE; return data; },
      (err) => { if (gen !== state.gen) throw STALE; throw err; });
  }
  /** A call about the selected scope; its answer is dropped if the scope changed meanwhile. */
  MV.call = (endpoint, extra) => {
    if (!state.scope) return Promise.reject(STALE);
    return guarded(MV.api(endpoint, Object.assign({ scope: MV.scopeBody() }, extra || {})), state.gen);
  };
  MV.apiUnscoped = (endpoint, body) => guarded(MV.api(endpoint, body), state.gen);
  MV.fail = (err) => { if (err !== STALE) MV.showError(err); };

  // ------------------------------------------------------------------ tabs
  let markTabs = null;
  MV.markDirty = (names) => names.forEach((n) => state.dirty.add(n));

  MV.selectTab = function (name, focusPanel) {
    state.tab = name;
    markTabs(name);
    loadTab();
    if (focusPanel) MV.$('#tab-' + name).focus();
  };

  function loadTab() {
    const name = state.tab;
    const panel = MV.panels[name];
    const root = MV.$('#panel-' + name);
    panel.build();
    let placeholder = root.querySelector(':scope > [data-testid="choose-scope"]');
    if (panel.needsScope && !state.scope) {
      if (!placeholder) {
        // The chat list is on the left on a wide screen, behind "☰ Chats" on a narrow one:
        // app.css shows the sentence that matches the layout.
        placeholder = h('p', { class: 'empty', testid: 'choose-scope' },
          h('span', { class: 'wide-only', testid: 'choose-scope-wide', i18n: 'choose_scope' }),
          h('span', { class: 'narrow-only', testid: 'choose-scope-narrow', i18n: 'choose_scope_narrow' }));
        root.prepend(placeholder);
      }
      Array.from(root.children).forEach((c) => { c.hidden = c !== placeholder; });
      return;
    }
    if (placeholder) placeholder.remove();
    Array.from(root.children).forEach((c) => { c.hidden = false; });
    if (state.dirty.has(name)) {
      state.dirty.delete(name);
      panel.load();
    }
  }

  // ------------------------------------------------------------------ scopes
  function scopeLabel(bot, session) {
    return (bot ? bot : t('no_bot')) + ' / ' + session;
  }

  MV.refreshScopes = async function () {
    const seq = ++state.scopesSeq;
    try {
      const data = await MV.api('/scopes', {});
      if (seq !== state.scopesSeq) return;
      state.scopes = data;
      renderScopes();
    } catch (err) {
      if (seq === state.scopesSeq) MV.fail(err);
    }
  };

  /** Active memories of a folder (what the Episodes list counts under its default filter):
   * a number, or from an older server {active, archived, superseded}. */
  function count(c) {
    if (typeof c === 'number') return c;
    if (!c || typeof c !== 'object') return 0;
    return typeof c.active === 'number' ? c.active : 0;
  }

  function renderScopes() {
    const tree = MV.$('#scope-tree');
    const filter = MV.$('#scope-filter').value.trim().toLowerCase();
    tree.replaceChildren();
    if (!state.scopes) return; // not answered (yet): say nothing rather than "no chats"
    const bots = state.scopes.bots || [];
    for (const bot of bots) {
      const chats = (bot.chats || []).filter((c) => !filter || c.session.toLowerCase().includes(filter) ||
        String(bot.bot || '').toLowerCase().includes(filter));
      if (!chats.length && filter) continue;
      const shared = count(bot.shared_episodes);
      const group = h('div', { class: 'bot-group', testid: 'scope-bot', 'data-bot': bot.bot || '' },
        h('div', { class: 'bot-head', title: bot.folder || '' },
          h('span', { class: 'bot-name' }, bot.bot || t('no_bot')),
          shared ? h('span', { class: 'muted small', i18n: 'shared_count', vars: { n: shared } }) : null));
      const list = h('ul', { class: 'chat-list' });
      for (const chat of chats) {
        const n = count(chat.episodes);
        const selected = state.scope && state.scope.session === chat.session && (state.scope.bot || '') === (bot.bot || '');
        const button = h('button', { type: 'button', class: 'scope-btn', testid: 'scope-item',
          'data-bot': bot.bot || '', 'data-session': chat.session, 'aria-current': selected ? 'true' : null,
          title: chat.session_key || chat.session, onclick: () => MV.selectScope(bot.bot || null, chat.session) },
        h('span', { class: 'chat-name' }, chat.session),
        h('span', { class: 'count', testid: 'scope-count', title: t('active_memories') }, String(n)),
        h('span', { class: 'chat-sub muted small', i18n: 'chat_counts',
          vars: { speakers: chat.speakers || 0, episodes: n } }));
        list.append(h('li', null, button));
      }
      group.append(list);
      tree.append(group);
    }
    if (!tree.children.length) {
      tree.append(MV.emptyState(filter ? 'no_matching_chats' : 'no_chats', 'scopes-empty'));
    }
  }

  MV.selectScope = function (bot, session, isolation) {
    state.scope = { bot: bot || null, session };
    if (isolation) {
      state.isolation = isolation;
      MV.$('#scope-isolation').value = isolation;
    }
    resetPanels();
    renderScopes();
    renderScopeTitle();
    setSidebar(false);
    MV.$('#main').focus({ preventScroll: true });
  };

  /** Scope or isolation changed: forget everything shown, drop answers still on their way. */
  function resetPanels() {
    state.gen += 1;
    MV.hideError();
    for (const name of TABS) MV.panels[name].clear();
    MV.markDirty(TABS);
    loadTab();
  }

  function renderScopeTitle() {
    const el = MV.$('#scope-title');
    if (!state.scope) { MV.tr(el, 'no_scope_selected'); return; }
    el.removeAttribute('data-i18n');
    el.textContent = scopeLabel(state.scope.bot, state.scope.session);
  }

  // ------------------------------------------------------------------ derive
  async function derive(event) {
    event.preventDefault();
    const form = event.currentTarget;
    const out = MV.$('#derive-result');
    const body = { bot: form.bot.value.trim() || null, session: form.session.value.trim(),
      isolation: form.isolation.value };
    try {
      const data = await MV.busy(form, MV.api('/derive', body));
      MV.hideError();
      const keys = ['session_name', 'session_key', 'user_key', 'session_folder', 'episodes_folder', 'profile_path'];
      out.replaceChildren(h('dl', { class: 'kv small' }, keys.map((k) => [
        h('dt', { i18n: 'derive_' + k }), h('dd', { 'data-key': k }, h('code', null, String(data[k] == null ? '' : data[k])))])),
      h('button', { type: 'button', class: 'btn btn-small', testid: 'derive-open', i18n: 'open_chat',
        onclick: () => MV.selectScope(body.bot, data.session_name || body.session, body.isolation) }));
    } catch (err) {
      out.replaceChildren();
      MV.fail(err);
    }
  }

  // ------------------------------------------------------------------ sidebar (narrow screens)
  function setSidebar(open) {
    document.body.classList.toggle('sidebar-open', open);
    MV.$('#sidebar-toggle').setAttribute('aria-expanded', open ? 'true' : 'false');
  }

  function renderMeta() {
    const m = state.meta;
    const box = MV.$('#meta');
    if (!m) { box.replaceChildren(); return; }
    const row = (key, value) => [h('dt', { i18n: key }), h('dd', null, h('code', null, String(value == null ? '—' : value)))];
    const embedding = typeof m.embedding === 'object' && m.embedding ? JSON.stringify(m.embedding) : m.embedding;
    box.replaceChildren(h('dl', { class: 'kv small' },
      row('meta_vault', m.vault), row('meta_host', m.host), row('isolation', m.isolation),
      row('meta_embedding', embedding), row('meta_git', t(m.git ? 'yes' : 'no')), row('meta_version', m.version)));
    // Server warnings (e.g. another process writes the index) stay visible above the panels.
    const warnings = Array.isArray(m.warnings) ? m.warnings : [];
    MV.fill(MV.$('#notices'), warnings.length ? h('ul', { class: 'notices' },
      warnings.map((w) => h('li', { testid: 'notice' }, String(w)))) : null);
  }

  // ------------------------------------------------------------------ start
  MV.onLanguage = function () {
    renderScopes();
    renderScopeTitle();
    renderMeta();
    for (const name of TABS) MV.panels[name].render();
  };

  function wire() {
    markTabs = MV.setupTabs(MV.$('#tabs'), (name) => MV.selectTab(name));
    markTabs(state.tab);
    MV.$('#lang-select').addEventListener('change', (e) => MV.setLanguage(e.target.value, true));
    MV.$('#theme-toggle').addEventListener('click', () => {
      MV.setTheme(MV.currentTheme() === 'dark' ? 'light' : 'dark', true);
    });
    MV.$('#error-dismiss').addEventListener('click', MV.hideError);
    MV.$('#scopes-refresh').addEventListener('click', MV.refreshScopes);
    MV.$('#scope-filter').addEventListener('input', renderScopes);
    MV.$('#derive-form').addEventListener('submit', derive);
    MV.$('#sidebar-toggle').addEventListener('click', () => {
      setSidebar(!document.body.classList.contains('sidebar-open'));
      if (document.body.classList.contains('sidebar-open')) MV.$('#scope-filter').focus();
    });
    document.addEventListener('click', (e) => {
      // Narrow screens: a click outside the open sidebar closes it.
      if (!document.body.classList.contains('sidebar-open')) return;
      if (e.target.closest('#sidebar') || e.target.closest('#sidebar-toggle')) return;
      setSidebar(false);
    });
    document.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && document.body.classList.contains('sidebar-open')) {
        setSidebar(false);
        MV.$('#sidebar-toggle').focus();
      }
    });
    MV.$('#scope-isolation').addEventListener('change', (e) => {
      state.isolation = e.target.value;
      if (state.scope) resetPanels();
    });
    MV.$('#refresh').addEventListener('click', () => {
      MV.refreshScopes();
      MV.markDirty(TABS);
      loadTab();
    });
  }

  let started = false;

  async function start(ctx) {
    // LangBot 4.11 posts its context twice when the frame loads: start once.
    if (started) return;
    started = true;
    const sdk = window.langbot;
    // Language: the person's choice if any, else the host's (followed until they switch).
    const chosen = MV.store.get(MV.KEYS.language);
    MV.i18n.override = MV.LANGS.includes(chosen) ? chosen : null;
    await MV.setLanguage(MV.i18n.override || MV.langFile((ctx && ctx.language) || sdk.language));
    sdk.onLanguageChange((language) => {
      // The host SDK re-translated [data-i18n] with its language: put ours back.
      MV.setLanguage(MV.i18n.override || MV.langFile(language));
    });
    const theme = MV.store.get(MV.KEYS.theme);
    if (theme === 'dark' || theme === 'light') MV.setTheme(theme);
    else MV.paintTheme((ctx && ctx.theme) || sdk.theme || 'light');
    sdk.onThemeChange(() => MV.syncThemeToggle()); // the host's theme wins when it changes
    MV.syncThemeToggle();
    renderScopeTitle();
    loadTab();
    try {
      state.meta = await MV.api('/meta', {});
      if (state.meta && (state.meta.isolation === 'bot' || state.meta.isolation === 'session')) {
        state.isolation = state.meta.isolation;
        MV.$('#scope-isolation').value = state.isolation;
        MV.$('#derive-form').isolation.value = state.isolation;
      }
      renderMeta();
    } catch (err) {
      MV.fail(err);
      return;
    }
    await MV.refreshScopes();
    document.body.classList.add('ready');
  }

  function boot() {
    wire();
    if (!window.langbot || typeof window.langbot.onReady !== 'function') {
      MV.showError(new Error('The page SDK (/api/v1/plugins/_sdk/page-sdk.js) did not load; reload the page.'));
      return;
    }
    window.langbot.onReady((ctx) => { start(ctx).catch(MV.fail); });
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot);
  else boot();
})();
