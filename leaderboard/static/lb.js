/* xpubench leaderboard: sorting, quick filtering and the compare picker (served at
 * /static/lb.js). The pages work without it: the server sorts and filters by query
 * parameters; this only makes it instant. No network requests. */
(function () {
  'use strict';

  function each(list, fn) { Array.prototype.forEach.call(list, fn); }

  function cellKey(row, col) {
    var cell = row.cells[col];
    if (!cell) return null;
    var v = cell.getAttribute('data-v');
    return v === null || v === '' ? null : v;
  }

  // Sorts the rows of `table` by column `col`; empty cells stay last in either direction.
  function sortTable(table, col, dir) {
    var head = table.tHead.rows[0].cells[col];
    var numeric = head.getAttribute('data-type') !== 'text';
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.forEach(function (r, i) { r.setAttribute('data-pos', i); });
    rows.sort(function (a, b) {
      var x = cellKey(a, col), y = cellKey(b, col);
      if (x === null || y === null) {
        if (x === null && y === null) return a.getAttribute('data-pos') - b.getAttribute('data-pos');
        return x === null ? 1 : -1;
      }
      var c = numeric ? parseFloat(x) - parseFloat(y) : x.localeCompare(y);
      if (c === 0) return a.getAttribute('data-pos') - b.getAttribute('data-pos');
      return dir === 'asc' ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    each(table.tHead.rows[0].cells, function (c, i) {
      if (c.hasAttribute('data-key'))
        c.setAttribute('aria-sort', i === col ? (dir === 'asc' ? 'ascending' : 'descending') : 'none');
    });
    table.setAttribute('data-sorted', head.getAttribute('data-key') + ':' + dir);
  }

  function sortAll(key, dir) {
    each(document.querySelectorAll('table.sortable'), function (table) {
      each(table.tHead.rows[0].cells, function (c, i) {
        if (c.getAttribute('data-key') === key) sortTable(table, i, dir);
      });
    });
  }

  function hashSort() {
    var m = /(?:^#|&)sort=([a-z_]+):(asc|desc)/.exec(window.location.hash);
    if (m) sortAll(m[1], m[2]);
  }

  function setupSorting() {
    each(document.querySelectorAll('table.sortable'), function (table) {
      each(table.tHead.rows[0].cells, function (th, col) {
        var key = th.getAttribute('data-key');
        if (!key) return;
        var label = th.textContent;
        var link = th.querySelector('a.sort');
        if (link) label = link.textContent;
        th.textContent = '';
        var b = document.createElement('button');
        b.type = 'button';
        b.className = 'sort';
        b.textContent = label;
        b.addEventListener('click', function () {
          var cur = th.getAttribute('aria-sort');
          var dir = cur === 'descending' ? 'asc' : cur === 'ascending' ? 'desc'
            : (th.getAttribute('data-first') || 'desc');
          sortAll(key, dir);
          if (window.history && window.history.replaceState)
            window.history.replaceState(null, '', '#sort=' + key + ':' + dir);
        });
        th.appendChild(b);
      });
    });
  }

  // Hides rows (and then whole sections) that do not contain every typed word.
  function setupQuickFilter() {
    var input = document.getElementById('quick');
    if (!input) return;
    input.classList.remove('hidden');
    input.addEventListener('input', function () {
      var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      each(document.querySelectorAll('table.sortable'), function (table) {
        var shown = 0;
        each(table.tBodies[0].rows, function (row) {
          var text = row.textContent.toLowerCase();
          var ok = words.every(function (w) { return text.indexOf(w) >= 0; });
          row.classList.toggle('hidden', !ok);
          if (ok) shown++;
        });
        var section = table.closest('section.group');
        if (section) section.classList.toggle('hidden', shown === 0);
      });
    });
  }

  // Enables the compare button when exactly two different submissions are ticked.
  function setupCompare() {
    var form = document.getElementById('compare-form');
    if (!form) return;
    var button = form.querySelector('button[type=submit]');
    var note = document.getElementById('compare-note');
    function update() {
      var ids = {};
      each(form.querySelectorAll('input[name=id]:checked'), function (c) { ids[c.value] = 1; });
      var n = Object.keys(ids).length;
      if (button) button.disabled = n !== 2;
      if (note) note.textContent = n === 2 ? 'ready to compare' : n + ' of 2 submissions picked';
    }
    form.addEventListener('change', update);
    update();
  }

  document.addEventListener('DOMContentLoaded', function () {
    setupSorting();
    setupQuickFilter();
    setupCompare();
    hashSort();
    window.addEventListener('hashchange', hashSort);
    document.documentElement.setAttribute('data-js', 'ready');
  });
})();
