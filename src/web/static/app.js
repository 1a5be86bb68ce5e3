// anonpoll's only script. Every page works without it; it adds:
// - the admin key: read from the URL fragment (#key), which the browser never
//   sends to the server, put in the key form, sent in the POST body, and
//   removed from the address bar and history;
// - an invite code: read from an invite link's fragment (#invite=CODE), put
//   in the vote form's code field and removed from the address bar, so a
//   bookmark or a copied address no longer carries it;
// - a print button on the sheet of invite cards;
// - copy buttons next to links;
// - on public results, a refresh every 10 s while the page is open (asks
//   this server only: the CSP's connect-src is 'self');
// - a note in localStorage after a vote (never sent anywhere), so the poll's
//   page can say "already answered"; notes are dropped after the poll's erase day;
// - a receipt after a vote (issue 15): kept in localStorage for its poll
//   until the poll's erase day (never a cookie, never sent but in the POST
//   of the ballot page's form); the share page then offers to open one's
//   response, and the ballot page (`/p/{id}/ballot`) takes the receipt from
//   its link's fragment (#receipt=, removed from the address bar at once)
//   or from storage, and sends its form by itself;
// - focus on the error summary of a form that came back with problems;
// - on the creation form, only the fields of each question's chosen type
//   (without script all are shown; the server reads those of the type);
// - on the vote form, "move up"/"move down" buttons for rankings, which keep
//   the rank selects in step with the order of the rows;
// - on the creation form, Enter in a field does not send the form (only the
//   submit button does), so a half-written poll is not created by accident;
//   Enter in an answer goes to the next answer (adding one at the end), and
//   each answer has a remove button.
"use strict";

(function () {
  var PREFIX = "anonpoll:voted:";
  // A receipt is kept as "<erase day> <receipt>".
  var RECEIPT = "anonpoll:receipt:";
  var today = new Date().toISOString().slice(0, 10);

  function storage() {
    try { return window.localStorage; } catch (e) { return null; }
  }

  // A secret the address carries as "#name=value" (an invite code, a
  // receipt): taken off the address first, whatever happens next, so a
  // bookmark or a copied address does not carry it; "" if there is none
  // or it is malformed (then it is typed instead).
  function takeFragment(name) {
    var m = new RegExp("^#" + name + "=([^&]*)$").exec(location.hash);
    if (!m) return "";
    history.replaceState(null, "", location.pathname + location.search);
    try { return decodeURIComponent(m[1]); } catch (e) { return ""; }
  }

  // Admin key from the fragment: at load, and when the fragment changes
  // while the key prompt is open (the admin link pasted into the address
  // bar of this very page only changes the fragment, and loads nothing).
  var tokenForm = document.querySelector("form[data-token-form]");
  function keyFromFragment() {
    // A "#name=value" fragment is another kind of secret (takeFragment).
    if (location.hash.length <= 1 || /^#\w+=/.test(location.hash)) return;
    var key = "";
    try { key = decodeURIComponent(location.hash.slice(1)); } catch (e) { /* malformed: typed instead */ }
    history.replaceState(null, "", location.pathname + location.search);
    var field = tokenForm.querySelector("input[name=token]");
    if (field && key) {
      field.value = key;
      tokenForm.submit();
    }
  }
  if (tokenForm) {
    keyFromFragment();
    window.addEventListener("hashchange", keyFromFragment);
  }

  // Invite code from the fragment (see takeFragment).
  var inviteField = document.getElementById("invite");
  var code = takeFragment("invite");
  if (inviteField && code && !inviteField.value) inviteField.value = code;
  // Switching language reloads the page: the code typed or taken from the
  // link goes along in the new address's fragment (never sent; taken off
  // again on arrival), or it would be lost.
  if (inviteField) {
    Array.prototype.forEach.call(document.querySelectorAll("nav.langs a"), function (a) {
      a.addEventListener("click", function () {
        var base = a.href.split("#")[0];
        var typed = inviteField.value.trim();
        a.href = typed ? base + "#invite=" + encodeURIComponent(typed) : base;
      });
    });
  }

  // The sheet of invite cards: a button for the browser's own print dialog.
  Array.prototype.forEach.call(document.querySelectorAll("button[data-print]"), function (button) {
    button.hidden = false;
    button.addEventListener("click", function () { window.print(); });
  });

  // Copy buttons.
  var copyButtons = document.querySelectorAll("button[data-copy]");
  Array.prototype.forEach.call(copyButtons, function (button) {
    button.hidden = false;
    var original = button.textContent;
    button.addEventListener("click", function () {
      var input = document.getElementById(button.getAttribute("data-copy"));
      if (!input) return;
      var done = function () {
        button.textContent = button.getAttribute("data-copied");
        setTimeout(function () { button.textContent = original; }, 2000);
      };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(input.value).then(done, function () {
          input.select();
        });
      } else {
        input.select();
        try { if (document.execCommand("copy")) done(); } catch (e) { /* selected for manual copy */ }
      }
    });
  });

  // Public results, live: while the page is open and shown, ask the API
  // for the results every 10 s; when they changed, fetch this page again
  // (the same address, no cookie, nothing else sent) and put its results in
  // place of the old ones, so figures are drawn by the server exactly as on
  // a reload. Opened "pairwise" boxes stay open. Without script the page
  // shows the results as they were when it loaded.
  var live = document.querySelector("[data-live-results]");
  if (live && window.fetch && window.DOMParser) {
    var liveNote = live.querySelector(".results-live");
    if (liveNote) liveNote.hidden = false;
    var last = null;
    var busy = false;
    var refresh = function () {
      if (busy || document.hidden) return;
      busy = true;
      var get = function (url, type) {
        return fetch(url, { credentials: "omit", cache: "no-store", headers: { Accept: type } }).then(function (r) {
          if (!r.ok) throw new Error(String(r.status));
          return r.text();
        });
      };
      get(live.getAttribute("data-live-results"), "application/json").then(function (json) {
        if (last === null) last = json;
        if (json === last) return null;
        return get(location.pathname + location.search, "text/html").then(function (html) {
          var fresh = new DOMParser().parseFromString(html, "text/html").querySelector("[data-live-results] section.results");
          var old = live.querySelector("section.results");
          // The poll has closed (its results no longer change): stop asking.
          if (!fresh) {
            clearInterval(timer);
            document.removeEventListener("visibilitychange", refresh);
            if (liveNote) liveNote.hidden = true;
            return;
          }
          if (!old || old.contains(document.activeElement)) return;
          var open = Array.prototype.map.call(old.querySelectorAll("details"), function (d) { return d.open; });
          Array.prototype.forEach.call(fresh.querySelectorAll("details"), function (d, i) { if (open[i]) d.open = true; });
          old.replaceWith(document.importNode(fresh, true));
          last = json;
        });
      }).catch(function () { /* offline or closed: try again later */ }).then(function () { busy = false; });
    };
    refresh();
    var timer = setInterval(refresh, 10000);
    document.addEventListener("visibilitychange", refresh);
  }

  var store = storage();
  if (store) {
    // Drop the notes of polls that have been erased since.
    try {
      for (var i = store.length - 1; i >= 0; i--) {
        var k = store.key(i);
        // Both kinds start with the erase day: "<day>", "<day> <receipt>".
        var ours = k && (k.indexOf(PREFIX) === 0 || k.indexOf(RECEIPT) === 0);
        if (ours && (store.getItem(k) || "").split(" ")[0] <= today) store.removeItem(k);
      }
    } catch (e) { /* storage unavailable: nothing to tidy */ }

    // Just voted: remember it until the poll's erase day.
    var voted = document.getElementById("voted");
    if (voted) {
      try { store.setItem(PREFIX + voted.getAttribute("data-poll"), voted.getAttribute("data-until")); } catch (e) { /* full or disabled */ }
    }

    // On the poll's page: say so, and keep the note until the poll's erase
    // day as it is now (its admin may have moved it).
    var note = document.getElementById("already-voted");
    if (note) {
      try {
        var notePoll = note.getAttribute("data-poll");
        if (store.getItem(PREFIX + notePoll)) {
          note.hidden = false;
          store.setItem(PREFIX + notePoll, note.getAttribute("data-until"));
        }
      } catch (e) { /* storage unavailable */ }
    }
  }

  // Receipts. Read and written only here; a failing storage leaves the
  // pages as they are without script.
  function receiptOf(poll) {
    if (!store) return "";
    try { return ((store.getItem(RECEIPT + poll) || "").split(" ")[1]) || ""; } catch (e) { return ""; }
  }
  function forgetReceipt(poll) {
    if (!store) return;
    try { store.removeItem(RECEIPT + poll); } catch (e) { /* storage unavailable */ }
  }
  function forgetVote(poll) {
    if (!store) return;
    try { store.removeItem(PREFIX + poll); } catch (e) { /* storage unavailable */ }
  }
  // Comparable form of a receipt as typed: no dashes, spaces or case.
  function plain(r) { return (r || "").replace(/[\s-]/g, "").toUpperCase(); }

  // Just voted: keep the receipt until the poll's erase day.
  var receiptBox = document.querySelector("[data-receipt-poll]");
  var receiptCode = document.getElementById("receipt");
  if (receiptBox && receiptCode && store) {
    try {
      store.setItem(RECEIPT + receiptBox.getAttribute("data-receipt-poll"),
        receiptBox.getAttribute("data-until") + " " + receiptCode.textContent.trim());
    } catch (e) { /* full or disabled: the receipt is on the page */ }
  }

  // Share page: offer one's own response when this browser keeps a receipt.
  var remembered = document.getElementById("receipt-remembered");
  if (remembered && receiptOf(remembered.getAttribute("data-poll"))) {
    remembered.hidden = false;
    // Kept until the poll's erase day as it is now.
    try {
      store.setItem(RECEIPT + remembered.getAttribute("data-poll"),
        remembered.getAttribute("data-until") + " " + receiptOf(remembered.getAttribute("data-poll")));
    } catch (e) { /* storage unavailable */ }
    if (note) note.hidden = true;
    var plainLink = document.getElementById("own-ballot-link");
    if (plainLink) plainLink.hidden = true;
    var forget = remembered.querySelector("[data-forget-receipt]");
    if (forget) {
      forget.addEventListener("click", function () {
        forgetReceipt(remembered.getAttribute("data-poll"));
        remembered.hidden = true;
        if (plainLink) plainLink.hidden = false;
        // The vote note, which the remembered receipt stood in for, again.
        try {
          if (note && store.getItem(PREFIX + note.getAttribute("data-poll"))) note.hidden = false;
        } catch (e) { /* storage unavailable */ }
      });
    }
  }

  // Ballot page: the receipt from the link's fragment (taken off the
  // address first, whatever happens next) or from storage.
  var receiptForm = document.querySelector("form[data-receipt-form]");
  var given = takeFragment("receipt");
  if (receiptForm) {
    var poll = receiptForm.getAttribute("data-poll");
    var field = receiptForm.querySelector("input[name=receipt]");
    if (receiptForm.hasAttribute("data-refused")) {
      // Refused: a kept receipt that was refused (withdrawn elsewhere) goes.
      if (field && plain(field.value) === plain(receiptOf(poll))) forgetReceipt(poll);
    } else if (field && receiptForm.hasAttribute("data-auto")) {
      var r = given || receiptOf(poll);
      // Sent by itself once per visit: coming back to this page (the Back
      // button) shows the prompt, or Back could never leave the ballot.
      var nav = window.performance && performance.getEntriesByType
        ? performance.getEntriesByType("navigation")[0] : null;
      var back = (nav && nav.type === "back_forward") || (history.state && history.state.autoSent);
      if (r && !field.value && !back) {
        field.value = r;
        history.replaceState({ autoSent: true }, "", location.pathname + location.search);
        receiptForm.submit();
      } else if (r && !field.value) {
        field.value = r;
      }
    }
  }

  // Withdrawn: this browser forgets the receipt and the vote note.
  var withdrawn = document.querySelector("[data-forget-poll]");
  if (withdrawn && store) {
    forgetReceipt(withdrawn.getAttribute("data-forget-poll"));
    forgetVote(withdrawn.getAttribute("data-forget-poll"));
  }

  // Creation form: show the fields of the chosen type only.
  Array.prototype.forEach.call(document.querySelectorAll("select[data-kind]"), function (select) {
    var row = select.closest("fieldset");
    if (!row) return;
    function sync() {
      Array.prototype.forEach.call(row.querySelectorAll("[data-kinds]"), function (el) {
        el.hidden = el.getAttribute("data-kinds").split(" ").indexOf(select.value) < 0;
      });
    }
    select.addEventListener("change", sync);
    sync();
  });

  // Creation form: Enter in a one-line field would press the form's first
  // submit button and create the poll before it is written. Without script
  // the browser's own behaviour stays.
  var createForm = document.querySelector("form.create");
  if (createForm) {
    createForm.addEventListener("keydown", function (e) {
      var el = e.target;
      if (e.key !== "Enter" || e.isComposing || !el || el.tagName !== "INPUT") return;
      // Buttons keep their Enter; a file field's opens its chooser.
      if (/^(submit|button|reset|image|file)$/.test(el.type)) return;
      e.preventDefault();
    });
  }

  // Creation form, answers: a remove button per answer (the answers below
  // move up, so the rows stay numbered 1, 2, 3…), and Enter in an answer
  // goes to the next one, adding a row at the end (up to the limit).
  // Without script a blank answer is simply left out by the server.
  Array.prototype.forEach.call(document.querySelectorAll("ol[data-options]"), function (list) {
    var q = list.getAttribute("data-options");
    var max = parseInt(list.getAttribute("data-max"), 10) || 0;
    function items() { return Array.prototype.slice.call(list.children); }
    function field(li) { return li.querySelector("input[type=text]"); }
    function sync() {
      var lis = items();
      lis.forEach(function (li) { li.querySelector("[data-remove-option]").hidden = lis.length <= 2; });
    }
    function removeRow(li) {
      var lis = items();
      var k = lis.indexOf(li);
      for (var j = k; j < lis.length - 1; j++) field(lis[j]).value = field(lis[j + 1]).value;
      list.removeChild(lis[lis.length - 1]);
      sync();
      var rest = items();
      field(rest[Math.min(k, rest.length - 1)]).focus();
    }
    function addRow() {
      var lis = items();
      if (lis.length >= max) return null;
      var n = lis.length;
      var li = lis[n - 1].cloneNode(true);
      var input = field(li);
      var id = "f-q" + q + "o" + n;
      input.id = id;
      input.name = "q" + q + "o" + n;
      input.value = "";
      ["aria-invalid", "aria-describedby", "autofocus"].forEach(function (a) { input.removeAttribute(a); });
      Array.prototype.forEach.call(li.querySelectorAll(".field-error, .hint"), function (el) { el.parentNode.removeChild(el); });
      var label = li.querySelector("label");
      label.htmlFor = id;
      label.textContent = list.getAttribute("data-label").replace("{n}", String(n + 1));
      li.querySelector("[data-remove-option]").setAttribute("aria-label", list.getAttribute("data-remove").replace("{n}", String(n + 1)));
      list.appendChild(li);
      wire(li);
      sync();
      return input;
    }
    function wire(li) {
      li.querySelector("[data-remove-option]").addEventListener("click", function () { removeRow(li); });
      field(li).addEventListener("keydown", function (e) {
        if (e.key !== "Enter" || e.isComposing) return;
        e.preventDefault();
        var lis = items();
        var k = lis.indexOf(li);
        var next = k + 1 < lis.length ? field(lis[k + 1]) : addRow();
        if (next) next.focus();
      });
    }
    items().forEach(wire);
    sync();
  });

  // Vote form, rankings: the rows stand in the order of their ranks, ranked
  // ones first; moving a row ranks it (and every row above it), and the
  // selects always hold the rows' places, so the form sends what is seen.
  Array.prototype.forEach.call(document.querySelectorAll("ol[data-ranking]"), function (list) {
    var live = document.getElementById(list.getAttribute("data-live"));
    function rows() { return Array.prototype.slice.call(list.children); }
    function select(row) { return row.querySelector("select"); }
    function rank(row) { var v = parseInt(select(row).value, 10); return v > 0 ? v : 0; }
    function ranked() { return rows().filter(function (r) { return rank(r) > 0; }).length; }
    function optionText(row) { return row.querySelector("label").textContent; }
    // Sort by rank (unranked last), keeping the order of equals. Rows are
    // put back around `keep`, so the focused control never leaves the page.
    function arrange(order, keep) {
      var at = order.indexOf(keep);
      for (var i = at - 1; i >= 0; i--) list.insertBefore(order[i], order[i + 1]);
      for (var j = at + 1; j < order.length; j++) list.insertBefore(order[j], order[j - 1].nextSibling);
    }
    function number(count) {
      rows().forEach(function (r, i) { select(r).value = i < count ? String(i + 1) : ""; });
      update();
    }
    function update() {
      var rs = rows();
      rs.forEach(function (r, i) {
        r.querySelector("[data-move=up]").disabled = i === 0;
        r.querySelector("[data-move=down]").disabled = i === rs.length - 1;
      });
    }
    function announce(row) {
      var r = rank(row);
      var text = r ? list.getAttribute("data-moved").replace("{rank}", String(r)) : list.getAttribute("data-unranked");
      if (live) live.textContent = text.replace("{option}", optionText(row));
    }
    function move(row, dir, button) {
      var rs = rows();
      var i = rs.indexOf(row);
      var j = i + dir;
      if (j < 0 || j >= rs.length) return;
      var count = ranked();
      var wasRanked = rank(row) > 0;
      // The neighbour moves, not the row: focus stays on the pressed button.
      if (dir < 0) list.insertBefore(rs[j], row.nextSibling); else list.insertBefore(rs[j], row);
      if (dir < 0 || wasRanked) count = Math.max(count, j + 1);
      number(count);
      if (button.disabled) row.querySelector(dir < 0 ? "[data-move=down]" : "[data-move=up]").focus();
      announce(row);
    }
    var initial = rows().map(function (r, i) { return [rank(r) || Infinity, i, r]; });
    initial.sort(function (a, b) { return (a[0] - b[0]) || (a[1] - b[1]); });
    initial.forEach(function (k) { list.appendChild(k[2]); });
    rows().forEach(function (row) {
      row.querySelector("[data-move-buttons]").hidden = false;
      row.querySelector("[data-move=up]").addEventListener("click", function (e) { move(row, -1, e.currentTarget); });
      row.querySelector("[data-move=down]").addEventListener("click", function (e) { move(row, 1, e.currentTarget); });
      // A rank chosen in the select puts the row at that place.
      select(row).addEventListener("change", function () {
        var r = rank(row);
        var rest = rows().filter(function (x) { return x !== row; });
        var above = rest.filter(function (x) { return rank(x) > 0; });
        var below = rest.filter(function (x) { return rank(x) === 0; });
        if (r) above.splice(Math.min(r - 1, above.length), 0, row); else below.unshift(row);
        arrange(above.concat(below), row);
        number(above.length);
        announce(row);
      });
    });
    update();
  });

  var summary = document.querySelector("[data-focus]");
  if (summary) summary.focus();
})();
