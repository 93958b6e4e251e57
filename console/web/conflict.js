/* A save refused because the file changed on disk since the page showed it: nothing is
 * written over the disk version, and nothing the person typed is lost. The fields' values
 * are read and put back by testid (whatever fields a form has), and a memory's edit form
 * gets its choices: load the disk version, copy my text, then put mine back. */
(function () {
  'use strict';
  const MV = window.MV;
  const { h, t } = MV;
  const FIELDS = 'input[data-testid], textarea[data-testid], select[data-testid]';

  /** What the person has in the fields of `root`, by testid (`skip(testid, el)`: not these). */
  MV.typed = function (root, skip) {
    const values = {};
    if (!root) return values;
    root.querySelectorAll(FIELDS).forEach((el) => {
      const id = el.getAttribute('data-testid');
      if (!skip || !skip(id, el)) values[id] = el.value;
    });
    return values;
  };

  MV.putTyped = function (root, values) {
    for (const [id, value] of Object.entries(values || {})) {
      const el = root && root.querySelector('[data-testid="' + CSS.escape(id) + '"]');
      if (el && !el.disabled) el.value = value;
    }
  };

  /** The choices on top of a memory's edit form after a refused save. `mine` = {content,
   * values, reloaded}: before loading the disk version, the form still holds mine; after,
   * it holds the disk's and mine stays here (copy it, or put it back and save it over). */
  MV.conflictBox = function (mine, form, loadDisk) {
    const kept = h('textarea', { class: 'raw-json', readonly: true, rows: 3, hidden: !mine.reloaded,
      testid: 'episode-conflict-mine', 'aria-label': t('conflict_mine') });
    kept.value = mine.content;
    const copy = h('button', { type: 'button', class: 'btn btn-small', testid: 'episode-conflict-copy',
      i18n: 'conflict_copy_mine', onclick: () => MV.copyText(mine.content, kept) });
    const reload = h('button', { type: 'button', class: 'btn btn-small', testid: 'episode-conflict-reload',
      i18n: 'conflict_load_disk', onclick: () => loadDisk(reload) });
    const useMine = h('button', { type: 'button', class: 'btn btn-small', testid: 'episode-conflict-use-mine',
      i18n: 'conflict_use_mine', onclick: () => {
        MV.putTyped(form, mine.values);
        form.querySelector('textarea:not([readonly])').focus();
      } });
    return h('div', { class: 'conflict-box', testid: 'episode-conflict', role: 'group', 'aria-label': t('conflict_mine') },
      h('p', { i18n: mine.reloaded ? 'conflict_disk_loaded' : 'conflict_kept' }),
      mine.reloaded ? h('p', { class: 'small muted', i18n: 'conflict_mine' }) : null, kept,
      h('div', { class: 'row wrap' }, mine.reloaded ? useMine : reload, copy));
  };
})();
