/* MemVault Memory Console: DOM helpers, i18n, theme, messages.
 * Server text is untrusted (memory text is written by people and models): it only ever goes
 * into the page through textContent / text nodes / attribute values, never through innerHTML. */
(function () {
  'use strict';
  const MV = (window.MV = window.MV || {});

  // ------------------------------------------------------------------ storage
  // LangBot's sandboxed iframe has an opaque origin: localStorage throws there, so every
  // preference falls back to memory for the life of the page.
  const memory = {};
  MV.store = {
    get(key) {
      try {
        const value = window.localStorage.getItem(key);
        if (value !== null) return value;
      } catch (e) { /* sandboxed */ }
      return Object.prototype.hasOwnProperty.call(memory, key) ? memory[key] : null;
    },
    set(key, value) {
      memory[key] = value;
      try { window.localStorage.setItem(key, value); } catch (e) { /* sandboxed */ }
    },
  };
  MV.KEYS = { language: 'memvault.console.language', theme: 'memvault.console.theme' };

  // ------------------------------------------------------------------ DOM
  const PROPS = new Set(['value', 'checked', 'disabled', 'hidden', 'selected', 'open', 'readOnly']);

  function append(el, children) {
    for (const child of children.flat(Infinity)) {
      if (child == null || child === false) continue;
      el.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return el;
  }

  /** h('button', {class, testid, i18n, text, onclick, ...attrs}, ...children) */
  function h(tag, props, ...children) {
    const el = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value == null || value === false) continue;
      if (key === 'class') el.className = value;
      else if (key === 'text') el.textContent = String(value);
      else if (key === 'testid') el.setAttribute('data-testid', value);
      else if (key === 'i18n') MV.tr(el, value);
      else if (key === 'vars') el.setAttribute('data-i18n-vars', JSON.stringify(value));
      else if (key.startsWith('on') && typeof value === 'function') {
        el.addEventListener(key.slice(2), value);
      } else if (PROPS.has(key)) el[key] = value;
      else el.setAttribute(key, value === true ? '' : String(value));
    }
    if (props && props.vars && props.i18n) MV.tr(el, props.i18n, props.vars);
    return append(el, children);
  }
  MV.h = h;
  MV.append = append;
  MV.$ = (selector, root) => (root || document).querySelector(selector);
  MV.clear = (el) => { el.replaceChildren(); return el; };
  /** replaceChildren that skips null / false (native replaceChildren would print "null"). */
  MV.fill = (el, ...children) => { el.replaceChildren(); return append(el, children); };

  // ------------------------------------------------------------------ i18n
  // The languages of LangBot's official plugins, as its page SDK names the files (i18n/ja_JP.json
  // for the host's 'ja-JP'); index.html's #lang-select offers the same list.
  MV.LANGS = ['en_US', 'zh_Hans', 'zh_Hant', 'ja_JP', 'vi_VN', 'th_TH', 'es_ES'];
  const dicts = Object.fromEntries(MV.LANGS.map((lang) => [lang, {}]));
  const i18n = (MV.i18n = { lang: 'en_US', override: null, loaded: {} });

  /** The file for a host or browser language tag: zh-TW / zh-HK / zh-Hant -> zh_Hant, other
   * Chinese -> zh_Hans, else by the first subtag (es-MX -> es_ES); English when none fits. */
  MV.langFile = function (language) {
    const tag = String(language || '').toLowerCase().replace(/_/g, '-');
    if (/^zh-(hant|tw|hk|mo)\b/.test(tag)) return 'zh_Hant';
    const base = tag.split('-')[0];
    return MV.LANGS.find((lang) => lang.toLowerCase().split('_')[0] === base) || 'en_US';
  };

  async function loadDict(lang) {
    if (i18n.loaded[lang]) return;
    try {
      const resp = await fetch('./i18n/' + lang + '.json', { cache: 'no-cache' });
      if (!resp.ok) throw new Error('HTTP ' + resp.status);
      dicts[lang] = await resp.json();
      i18n.loaded[lang] = true;
    } catch (e) {
      // Fall back on what the host SDK loaded (it fetched the same files).
      console.warn('memvault: could not load i18n/' + lang + '.json', e);
    }
  }

  function format(text, vars) {
    if (!vars) return text;
    // Own keys only: a {constructor} in a message is not Object's.
    return String(text).replace(/\{(\w+)\}/g, (m, name) =>
      (Object.prototype.hasOwnProperty.call(vars, name) ? String(vars[name]) : m));
  }

  // Own keys only: a key built from a server value ('audit_op_' + operation) never reaches
  // Object.prototype.
  const own = (dict, key) => Object.prototype.hasOwnProperty.call(dict, key) && dict[key] != null;

  /** Whether `key` has a message (in the reader's language or English). */
  MV.has = (key) => own(dicts[i18n.lang], key) || own(dicts.en_US, key);

  /** The message of `key` before its {vars} go in. */
  function message(key) {
    let text = own(dicts[i18n.lang], key) ? dicts[i18n.lang][key] : null;
    if (text == null && own(dicts.en_US, key)) text = dicts.en_US[key];
    if (text == null && window.langbot && typeof window.langbot.t === 'function') {
      text = window.langbot.t(key, key);
    }
    return String(text == null ? key : text);
  }

  MV.t = (key, vars) => format(message(key), vars);

  /** A message's pieces: `...` in a message names a command or a file, shown as <code>. The
   * message is split on its backticks before the {vars} go in, so only a translator's
   * backticks make code: a value (a path, a person's text) with one stays plain text. With an
   * odd number of backticks nothing is code. Returns [{code: bool, text}]. */
  MV.pieces = function (template, vars) {
    const parts = String(template).split('`');
    if (parts.length % 2 === 0) return [{ code: false, text: format(template, vars) }];
    return parts.map((part, i) => ({ code: i % 2 === 1, text: format(part, vars) }))
      .filter((piece) => piece.code || piece.text !== '');
  };

  /** Fill `el` with a message: text nodes and <code> elements, never HTML. */
  MV.putMessage = function (el, template, vars) {
    el.replaceChildren(...MV.pieces(template, vars).map((piece) => (piece.code
      ? h('code', null, piece.text) : document.createTextNode(piece.text))));
    return el;
  };

  /** Mark an element as translated by `key` (re-translated on every language change). */
  MV.tr = function (el, key, vars) {
    el.setAttribute('data-i18n', key);
    if (vars) el.setAttribute('data-i18n-vars', JSON.stringify(vars));
    else el.removeAttribute('data-i18n-vars');
    translate(el);
    return el;
  };

  const SAFE_ATTRS = ['placeholder', 'title', 'alt', 'aria-label', 'aria-description'];
  function translate(el) {
    const key = el.getAttribute('data-i18n');
    let vars = null;
    try { vars = JSON.parse(el.getAttribute('data-i18n-vars') || 'null'); } catch (e) { vars = null; }
    const template = message(key);
    const attr = el.getAttribute('data-i18n-attr');
    // An attribute cannot hold <code>: the command stays, its backticks go.
    if (attr && SAFE_ATTRS.includes(attr)) {
      el.setAttribute(attr, MV.pieces(template, vars).map((piece) => piece.text).join(''));
    } else {
      MV.putMessage(el, template, vars);
    }
  }

  MV.applyI18n = function (root) {
    (root || document).querySelectorAll('[data-i18n]').forEach(translate);
    document.documentElement.lang = i18n.lang === 'en_US' ? 'en' : i18n.lang.replace('_', '-');
    document.title = MV.t('page_title');
  };

  MV.setLanguage = async function (lang, byPerson) {
    if (byPerson) {
      i18n.override = lang;
      MV.store.set(MV.KEYS.language, lang);
    }
    await Promise.all([loadDict('en_US'), loadDict(lang)]);
    i18n.lang = lang;
    MV.applyI18n();
    const select = MV.$('#lang-select');
    if (select) select.value = lang;
    if (MV.onLanguage) MV.onLanguage(lang);
  };

  // ------------------------------------------------------------------ theme
  // The same palette LangBot's page SDK sets, so app.css only reads var(--langbot-*).
  const PALETTE = {
    dark: ['#0a0a0a', '#171717', '#fafafa', '#a1a1aa', '#27272a', '#3b82f6'],
    light: ['#ffffff', '#f8fafc', '#0a0a0a', '#71717a', '#e4e4e7', '#2563eb'],
  };
  const VARS = ['bg', 'bg-card', 'text', 'text-muted', 'border', 'accent'];

  MV.currentTheme = function () {
    return document.documentElement.classList.contains('dark') ? 'dark' : 'light';
  };

  MV.paintTheme = function (theme) {
    const root = document.documentElement;
    root.classList.remove('light', 'dark');
    root.classList.add(theme);
    root.setAttribute('data-theme', theme);
    PALETTE[theme].forEach((value, i) => root.style.setProperty('--langbot-' + VARS[i], value));
  };

  MV.setTheme = function (theme, byPerson) {
    if (byPerson) MV.store.set(MV.KEYS.theme, theme);
    if (window.langbot && typeof window.langbot.setTheme === 'function') {
      window.langbot.setTheme(theme); // standalone shim: stores it and tells its listeners
    }
    MV.paintTheme(theme);
    MV.syncThemeToggle();
  };

  MV.syncThemeToggle = function () {
    const dark = MV.currentTheme() === 'dark';
    const button = MV.$('#theme-toggle');
    if (!button) return;
    button.setAttribute('aria-pressed', dark ? 'true' : 'false');
    MV.$('#theme-icon').textContent = dark ? '☀' : '☾';
    MV.tr(MV.$('#theme-label'), dark ? 'theme_light' : 'theme_dark');
  };

  // ------------------------------------------------------------------ messages
  MV.errorText = function (err) {
    if (err == null) return MV.t('error_unknown');
    const message = err.message || String(err);
    return message === 'Request timeout' ? MV.t('error_timeout') : message;
  };

  /** The server's message as it is, and (`advice`, an i18n key) what the page did about it
   * and what to do next, as a sentence of its own in the reader's language. */
  MV.showError = function (err, advice) {
    const banner = MV.$('#error-banner');
    MV.$('#error-message').textContent = MV.errorText(err);
    const more = MV.$('#error-advice');
    if (advice) MV.tr(more, advice);
    else { more.removeAttribute('data-i18n'); more.textContent = ''; }
    more.hidden = !advice;
    banner.dataset.code = (err && err.code) || '';
    banner.hidden = false;
  };

  MV.hideError = function () { MV.$('#error-banner').hidden = true; };

  let toastTimer = null;
  MV.toast = function (text) {
    const toast = MV.$('#toast');
    toast.textContent = text;
    toast.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { toast.hidden = true; }, 3500);
  };

  MV.isConflict = function (err) {
    // LangBot's SDK rejects with the message only (no .code): recognise the vault's wording too.
    return !!err && (err.code === 'conflict' ||
      /conflict|changed on disk|since (you opened|it was read)|kept changing/i.test(err.message || ''));
  };

  // ------------------------------------------------------------------ formatting
  MV.fmtDate = function (iso) {
    if (!iso) return '';
    const date = new Date(iso);
    if (Number.isNaN(date.getTime())) return String(iso);
    const two = (n) => String(n).padStart(2, '0');
    return date.getFullYear() + '-' + two(date.getMonth() + 1) + '-' + two(date.getDate()) + ' ' +
      two(date.getHours()) + ':' + two(date.getMinutes());
  };

  MV.fmtNum = function (value) {
    if (typeof value !== 'number') return value == null ? '—' : String(value);
    return Number.isInteger(value) ? String(value) : value.toFixed(3);
  };

  MV.short = (sha) => (sha ? String(sha).slice(0, 10) : '—');

  /** A value of a fixed vocabulary (an audit operation, a memory's source or category) in the
   * reader's language, the value as written in its title and data-value; a value the page has
   * no name for (a newer server's, a hand-written one) is shown as it is, in <code>. */
  MV.named = function (prefix, value, props) {
    const raw = value == null ? '' : String(value);
    const base = Object.assign({ 'data-value': raw }, props || {});
    if (raw && MV.has(prefix + raw)) return h('span', Object.assign(base, { i18n: prefix + raw, title: raw }));
    return h('code', base, raw);
  };

  // ------------------------------------------------------------------ tabs
  /** role=tablist with roving tabindex and arrow / Home / End keys. */
  MV.setupTabs = function (tablist, onSelect) {
    const tabs = () => Array.from(tablist.querySelectorAll('[role=tab]'));
    tablist.addEventListener('click', (event) => {
      const tab = event.target.closest('[role=tab]');
      if (tab) onSelect(tab.dataset.tab);
    });
    tablist.addEventListener('keydown', (event) => {
      const all = tabs();
      const index = all.indexOf(document.activeElement);
      if (index < 0) return;
      let next = null;
      if (event.key === 'ArrowRight' || event.key === 'ArrowDown') next = (index + 1) % all.length;
      else if (event.key === 'ArrowLeft' || event.key === 'ArrowUp') next = (index - 1 + all.length) % all.length;
      else if (event.key === 'Home') next = 0;
      else if (event.key === 'End') next = all.length - 1;
      if (next === null) return;
      event.preventDefault();
      all[next].focus();
      onSelect(all[next].dataset.tab);
    });
    return function mark(name) {
      for (const tab of tabs()) {
        const on = tab.dataset.tab === name;
        tab.setAttribute('aria-selected', on ? 'true' : 'false');
        tab.tabIndex = on ? 0 : -1;
        const panel = document.getElementById(tab.getAttribute('aria-controls'));
        if (panel) panel.hidden = !on;
      }
    };
  };

  /** A button that asks again in place (window.confirm is blocked in sandboxed iframes). */
  MV.confirmButton = function (opts) {
    const wrap = h('span', { class: 'confirm-wrap' });
    const ask = h('button', { type: 'button', class: 'btn btn-danger', testid: opts.testid, i18n: opts.label });
    ask.addEventListener('click', () => {
      const yes = h('button', { type: 'button', class: 'btn btn-danger', testid: opts.testid + '-confirm',
        i18n: opts.confirm, onclick: () => { wrap.replaceChildren(ask); opts.onConfirm(); } });
      const no = h('button', { type: 'button', class: 'btn', testid: opts.testid + '-cancel', i18n: 'cancel',
        onclick: () => { wrap.replaceChildren(ask); ask.focus(); } });
      wrap.replaceChildren(h('span', { class: 'confirm-q', i18n: opts.question }), yes, no);
      no.focus();
    });
    wrap.append(ask);
    return wrap;
  };

  /** Disable the buttons of `el` while `promise` runs. */
  MV.busy = async function (el, promise) {
    const buttons = el ? Array.from(el.querySelectorAll('button')) : [];
    buttons.forEach((b) => { b.disabled = true; });
    if (el) el.setAttribute('aria-busy', 'true');
    try { return await promise; } finally {
      buttons.forEach((b) => { b.disabled = false; });
      if (el) el.removeAttribute('aria-busy');
    }
  };

  MV.emptyState = (key, testid) => h('p', { class: 'empty', testid: testid || 'empty', i18n: key });
  MV.loading = () => h('p', { class: 'loading muted', testid: 'loading', i18n: 'loading' });
})();
