/* JSON out: copy, download and show-raw for the panels' JSON (clipboard and downloads may be
 * blocked in LangBot's sandboxed frame: each says so and offers the other way). */
(function () {
  'use strict';
  const MV = window.MV;
  const { h } = MV;

  MV.copyText = async function (text, fallbackArea) {
    try {
      await navigator.clipboard.writeText(text);
      MV.toast(MV.t('copied'));
      return;
    } catch (e) { /* sandboxed iframe: no clipboard permission */ }
    if (fallbackArea) {
      fallbackArea.hidden = false;
      fallbackArea.value = text;
      fallbackArea.focus();
      fallbackArea.select();
      let ok = false;
      try { ok = document.execCommand('copy'); } catch (e) { ok = false; }
      MV.toast(MV.t(ok ? 'copied' : 'copy_manually'));
    } else {
      MV.toast(MV.t('copy_manually'));
    }
  };

  MV.download = function (filename, text) {
    try {
      const url = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
      const link = h('a', { href: url, download: filename, hidden: true });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
      // A sandboxed frame (LangBot) may drop the download without telling anyone.
      const framed = window.origin === 'null' || window.self !== window.top;
      MV.toast(MV.t(framed ? 'download_maybe_blocked' : 'download_started'));
    } catch (e) {
      MV.showError(new Error(MV.t('download_blocked')));
    }
  };

  /** Download / copy / show-raw buttons for a JSON text getter, plus the raw textarea. */
  MV.jsonTools = function (prefix, filename, getText) {
    const area = h('textarea', {
      class: 'raw-json', readonly: true, rows: 12, hidden: true, testid: prefix + '-raw-json',
      'aria-label': MV.t('raw_json'),
    });
    const run = (fn) => async () => {
      try { fn(await getText()); } catch (err) { MV.fail(err); }
    };
    const bar = h('div', { class: 'row wrap' },
      h('button', { type: 'button', class: 'btn', testid: prefix + '-download', i18n: 'download_json',
        onclick: run((text) => MV.download(filename(), text)) }),
      h('button', { type: 'button', class: 'btn', testid: prefix + '-copy', i18n: 'copy',
        onclick: run((text) => MV.copyText(text, area)) }),
      h('button', { type: 'button', class: 'btn', testid: prefix + '-show-raw', i18n: 'show_raw',
        onclick: run((text) => { area.value = text; area.hidden = !area.hidden; }) }));
    return h('div', { class: 'json-tools' }, bar, area);
  };
})();
