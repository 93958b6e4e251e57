/**
 * MemVault standalone page SDK: the `window.langbot` API of LangBot's page SDK
 * (onReady, api, t, applyI18n, theme, language, onThemeChange, onLanguageChange), for pages
 * served by `memvault console` at /api/v1/plugins/_sdk/page-sdk.js.
 *
 * - api(endpoint, body) -> POST /api/console {"endpoint", "body"} with X-MemVault-Token;
 *   resolves with the answer's "data"; an error answer ({"error", "code"}, HTTP 4xx/5xx)
 *   rejects with Error(message) + .code + .status.
 * - The token comes from the start-up URL's fragment (#token=...), is kept in sessionStorage and
 *   removed from the address bar.
 * - Theme: localStorage "memvault.console.theme", else prefers-color-scheme; sets the same
 *   --langbot-* CSS variables and html class (light/dark) as LangBot's SDK.
 * - Language: localStorage "memvault.console.language" (a file name of LANGS), else
 *   navigator.language; loads ./i18n/<file>.json and translates [data-i18n] elements, and
 *   reports the language as LangBot's web UI does ('ja-JP' for ja_JP.json).
 * Extras for the standalone host: setTheme(theme), setLanguage(language), host = 'standalone'.
 */
(function () {
  'use strict';

  var THEME_KEY = 'memvault.console.theme';
  var LANGUAGE_KEY = 'memvault.console.language';
  var TOKEN_KEY = 'memvault.console.token';
  var TIMEOUT_MS = 120000;

  var _theme = 'light';
  var _language = 'en-US';
  var _translations = {};
  var _ready = false;
  var _readyCallbacks = [];
  var _themeCallbacks = [];
  var _languageCallbacks = [];
  var _token = null;

  function storageGet(storage, key) {
    try { return window[storage].getItem(key); } catch (e) { return null; }
  }
  function storageSet(storage, key, value) {
    try { window[storage].setItem(key, value); } catch (e) { /* private mode */ }
  }

  // ---------------------------------------------------------------- token
  function readToken() {
    var hash = window.location.hash || '';
    var match = /(?:^#|&)token=([^&]*)/.exec(hash);
    if (match) {
      _token = decodeURIComponent(match[1]);
      storageSet('sessionStorage', TOKEN_KEY, _token);
      var rest = hash.replace(/^#/, '').split('&').filter(function (p) { return p.indexOf('token=') !== 0; });
      var url = window.location.pathname + window.location.search + (rest.length ? '#' + rest.join('&') : '');
      try { window.history.replaceState(null, '', url); } catch (e) { /* ignore */ }
    } else {
      _token = storageGet('sessionStorage', TOKEN_KEY);
    }
  }

  // ---------------------------------------------------------------- theme
  var PALETTE = {
    dark: { bg: '#0a0a0a', 'bg-card': '#171717', text: '#fafafa', 'text-muted': '#a1a1aa', border: '#27272a', accent: '#3b82f6' },
    light: { bg: '#ffffff', 'bg-card': '#f8fafc', text: '#0a0a0a', 'text-muted': '#71717a', border: '#e4e4e7', accent: '#2563eb' },
  };

  function applyTheme(theme) {
    _theme = theme === 'dark' ? 'dark' : 'light';
    var root = document.documentElement;
    root.classList.remove('light', 'dark');
    root.classList.add(_theme);
    root.setAttribute('data-theme', _theme);
    var colours = PALETTE[_theme];
    Object.keys(colours).forEach(function (name) { root.style.setProperty('--langbot-' + name, colours[name]); });
    for (var i = 0; i < _themeCallbacks.length; i++) {
      try { _themeCallbacks[i](_theme); } catch (e) { console.error(e); }
    }
  }

  function systemTheme() {
    try {
      return window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
    } catch (e) { return 'light'; }
  }

  // ---------------------------------------------------------------- i18n
  // As ui.js's MV.langFile (this file loads first, on its own).
  var LANGS = ['en_US', 'zh_Hans', 'zh_Hant', 'ja_JP', 'vi_VN', 'th_TH', 'es_ES'];
  function fileOf(language) {
    var tag = String(language || '').toLowerCase().replace(/_/g, '-');
    if (/^zh-(hant|tw|hk|mo)\b/.test(tag)) return 'zh_Hant';
    var base = tag.split('-')[0];
    for (var i = 0; i < LANGS.length; i++) {
      if (LANGS[i].toLowerCase().split('_')[0] === base) return LANGS[i];
    }
    return 'en_US';
  }
  function tagOf(file) { return file.replace('_', '-'); }

  function loadI18n(language) {
    var file = fileOf(language);
    return fetch('./i18n/' + file + '.json', { cache: 'no-cache' })
      .then(function (resp) { return resp.ok ? resp.json() : {}; })
      .catch(function () { return {}; })
      .then(function (data) {
        _translations = data || {};
        applyTranslations();
        return _translations;
      });
  }

  var SAFE_I18N_ATTRS = ['placeholder', 'title', 'alt', 'aria-label', 'aria-description'];
  function applyTranslations() {
    document.querySelectorAll('[data-i18n]').forEach(function (el) {
      var key = el.getAttribute('data-i18n');
      if (_translations[key] == null || el.hasAttribute('data-i18n-vars')) return;
      var attr = el.getAttribute('data-i18n-attr');
      if (attr && SAFE_I18N_ATTRS.indexOf(attr) !== -1) el.setAttribute(attr, _translations[key]);
      else el.textContent = _translations[key];
    });
  }

  // ---------------------------------------------------------------- api
  function api(endpoint, body, method) {
    var controller = typeof AbortController === 'function' ? new AbortController() : null;
    var timer = controller ? setTimeout(function () { controller.abort(); }, TIMEOUT_MS) : null;
    var headers = { 'Content-Type': 'application/json', Accept: 'application/json' };
    if (_token) headers['X-MemVault-Token'] = _token;
    return fetch('/api/console', {
      method: 'POST',
      headers: headers,
      body: JSON.stringify({ endpoint: endpoint, body: body == null ? {} : body, method: method || 'POST' }),
      cache: 'no-store',
      signal: controller ? controller.signal : undefined,
    }).then(function (resp) {
      return resp.text().then(function (text) {
        var data = null;
        try { data = text ? JSON.parse(text) : null; } catch (e) { data = undefined; }
        // Success is HTTP 200 with {"data": <answer>} (the answer may be null).
        if (resp.ok && data && typeof data === 'object' && 'data' in data) return data.data;
        if (resp.ok && data !== undefined && !(data && data.error)) return data;
        var message = data && typeof data.error === 'string' ? data.error
          : 'The console server answered HTTP ' + resp.status + (text ? ': ' + text.slice(0, 200) : '') + '.';
        var err = new Error(message);
        err.code = (data && data.code) || (resp.status === 401 || resp.status === 403 ? 'unauthorized'
          : resp.status >= 500 ? 'internal' : 'bad_request');
        err.status = resp.status;
        throw err;
      });
    }, function (cause) {
      var aborted = cause && cause.name === 'AbortError';
      var err = new Error(aborted ? 'Request timeout'
        : 'Cannot reach the MemVault console server; check that `memvault console` is still running, then reload.');
      err.code = aborted ? 'timeout' : 'unavailable';
      err.cause = cause;
      throw err;
    }).finally(function () { if (timer) clearTimeout(timer); });
  }

  // ---------------------------------------------------------------- public API
  window.langbot = {
    get theme() { return _theme; },
    get language() { return _language; },
    get ready() { return _ready; },
    host: 'standalone',

    onReady: function (callback) {
      if (_ready) {
        try { callback({ theme: _theme, language: _language }); } catch (e) { console.error(e); }
      } else {
        _readyCallbacks.push(callback);
      }
    },
    onThemeChange: function (callback) { _themeCallbacks.push(callback); },
    onLanguageChange: function (callback) { _languageCallbacks.push(callback); },
    t: function (key, fallback) {
      return _translations[key] != null ? _translations[key] : (fallback || key);
    },
    applyI18n: function () { applyTranslations(); },
    api: api,

    setTheme: function (theme) {
      storageSet('localStorage', THEME_KEY, theme);
      if (theme !== _theme) applyTheme(theme);
    },
    setLanguage: function (language) {
      var file = fileOf(language);
      storageSet('localStorage', LANGUAGE_KEY, file);
      if (tagOf(file) === _language) return Promise.resolve();
      _language = tagOf(file);
      return loadI18n(_language).then(function () {
        for (var i = 0; i < _languageCallbacks.length; i++) {
          try { _languageCallbacks[i](_language); } catch (e) { console.error(e); }
        }
      });
    },
  };

  // ---------------------------------------------------------------- start
  readToken();
  var storedTheme = storageGet('localStorage', THEME_KEY);
  applyTheme(storedTheme === 'dark' || storedTheme === 'light' ? storedTheme : systemTheme());
  try {
    window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', function () {
      var stored = storageGet('localStorage', THEME_KEY);
      if (stored !== 'dark' && stored !== 'light') applyTheme(systemTheme());
    });
  } catch (e) { /* old browsers */ }

  var storedLanguage = storageGet('localStorage', LANGUAGE_KEY);
  _language = tagOf(fileOf(storedLanguage || navigator.language || 'en-US'));

  function start() {
    loadI18n(_language).then(function () {
      _ready = true;
      var ctx = { theme: _theme, language: _language };
      var callbacks = _readyCallbacks.splice(0);
      for (var i = 0; i < callbacks.length; i++) {
        try { callbacks[i](ctx); } catch (e) { console.error(e); }
      }
    });
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
