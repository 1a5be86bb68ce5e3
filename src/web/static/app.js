// anonpoll's only script. Every page works without it; it adds:
// - the admin key: read from the URL fragment (#key), which the browser never
//   sends to the server, put in the key form, sent in the POST body, and
//   removed from the address bar and history; kept in this tab's
//   sessionStorage while the admin works, so that the page an action
//   redirects to opens the dashboard again, and every page of the admin
//   address stays in the history as a GET (no form sent again by a reload
//   or Back);
// - an invite code: read from an invite link's fragment (#invite=CODE), put
//   in the vote form's code field and removed from the address bar, so a
//   bookmark or a copied address no longer carries it;
// - a print button on the sheet of invite cards, and its way back to the
//   dashboard with the key kept in this tab's sessionStorage meanwhile;
// - copy buttons next to links;
// - on public results, and on the admin page whatever the visibility, a
//   refresh every 10 s while the page is open (asks this server only: the
//   CSP's connect-src is 'self'; the admin key in a header or a body);
// - a note in localStorage after a vote (never sent anywhere), so the poll's
//   page can say "already answered"; notes are dropped after the poll's erase day;
//   on a poll that shows its results after a vote, the note keeps, for the
//   rest of the vote's day (UTC), the vote's form code, the proof that opens
//   those results, so the share page can lead back to them;
// - on such a poll's share page, a way back to its results when this browser
//   voted: a kept receipt (posted to the results page) or that form code;
// - a receipt after a vote (issue 15): kept in localStorage for its poll
//   until the poll's erase day (never a cookie, never sent but in the POST
//   of the ballot page's form); the share page then offers to open one's
//   response, and the ballot page (`/p/{id}/ballot`) takes the receipt from
//   its link's fragment (#receipt=, removed from the address bar at once)
//   or from storage, and sends its form by itself;
// - "Your poll is ready" (issue 25): a warning before the page is left
//   while the admin link has not been copied or kept, and (opt-in, one
//   checkbox) the admin link kept in localStorage until the poll's erase
//   day, listed on the home page under "Your polls on this device" with a
//   Forget button each; never sent anywhere;
// - after a vote, the share page folds its form behind "Answer again" and
//   offers one's response(s): every receipt this browser got for the poll
//   is kept (one per ballot), so no vote makes an earlier one unreachable;
// - focus on the error summary of a form that came back with problems;
// - on the vote form, a multiple-choice box beyond the maximum is unticked
//   at once, with the reason at the question;
// - on the vote form, an optional schedule's "No answer" clears its slots,
//   and a slot's answer clears "No answer";
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
  // An admin link kept on request: "<erase day> <admin link> <title>".
  var ADMIN = "anonpoll:admin:";
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

  // The admin page after an action (issue 37): an action is answered by a
  // redirect to this page (a GET, the key in no address), and every page
  // of the admin address is kept in the history as a GET, so that neither
  // a reload nor Back sends a form again. The key of the dashboard last
  // shown waits in this tab's sessionStorage (gone with the tab; never
  // sent but in the POST bodies of this page's forms) for ten minutes at
  // most, and opens the dashboard with it by itself only on the page an
  // action redirects to (`?done=`) or on a reload, Back or Forward: a new
  // visit to the admin address asks for the key again. The
  // key is taken out as it is read (the dashboard puts it back); a key the
  // page refused is forgotten, so the prompt never sends it in a loop.
  var KEY_MINUTES = 10;
  var KEY = "anonpoll:key:";
  var adminPoll = (location.pathname.match(/^\/p\/([^\/]+)\/admin$/) || [])[1];
  if (adminPoll) {
    var shownKey = document.querySelector("form input[type=hidden][name=token]");
    try { if (shownKey && shownKey.value) session().setItem(KEY + adminPoll, Date.now() + " " + shownKey.value); } catch (e) { /* storage unavailable */ }
    // A reload of a page that answered a POST (the dashboard, the invite
    // sheet) loads this address (or the one the page names) instead of
    // sending the form again.
    var reloadAs = document.querySelector("[data-reload-as]");
    history.replaceState(null, "", reloadAs ? reloadAs.getAttribute("data-reload-as") : location.href);
    // A page the browser kept in memory shows the poll as it was: load it again.
    window.addEventListener("pageshow", function (e) { if (e.persisted) location.reload(); });
  }
  if (tokenForm) {
    var refusedKey = tokenForm.querySelector("input[name=token][aria-invalid=true]");
    if (adminPoll && refusedKey) {
      try { session().removeItem(KEY + adminPoll); } catch (e) { /* storage unavailable */ }
    } else if (adminPoll && location.hash.length <= 1) {
      var storedKey = "";
      try {
        var held = (session().getItem(KEY + adminPoll) || "").split(" ");
        session().removeItem(KEY + adminPoll);
        var fresh = Date.now() - Number(held[0]) < KEY_MINUTES * 60000;
        // A reload or Back/Forward of an admin page, or the page an action
        // redirected to; not a visit of the address typed or followed anew.
        var nav = ((performance.getEntriesByType && performance.getEntriesByType("navigation")[0]) || {}).type;
        var again = nav === "reload" || nav === "back_forward" || /(^|&)done=/.test(location.search.slice(1));
        if (fresh && held[1] && again) storedKey = held[1];
      } catch (e) { /* storage unavailable */ }
      var storedField = tokenForm.querySelector("input[name=token]");
      if (storedKey && storedField) {
        storedField.value = storedKey;
        tokenForm.submit();
      }
    }
    keyFromFragment();
    window.addEventListener("hashchange", keyFromFragment);
  }

  // Sentences that promise what only this script does, hidden without it.
  Array.prototype.forEach.call(document.querySelectorAll("[data-script-only]"), function (el) { el.hidden = false; });

  // Invite code from the fragment (see takeFragment). Switching language
  // sends the vote form along, the code with it (the server's form).
  var inviteField = document.getElementById("invite");
  var code = takeFragment("invite");
  if (inviteField && code && !inviteField.value) inviteField.value = code;

  // The invite sheet's way back to the dashboard (issue 25): the sheet holds
  // no key (a saved copy goes to whoever prints the cards), so the
  // dashboard's invite form keeps it in this tab's sessionStorage (gone
  // with the tab; never sent but in this POST) and the sheet's button posts
  // it back, taking it out of storage. Without it, the link: the key prompt.
  var BACK = "anonpoll:back:";
  function session() { try { return window.sessionStorage; } catch (e) { return null; } }
  Array.prototype.forEach.call(document.querySelectorAll("form[data-keep-key]"), function (form) {
    form.addEventListener("submit", function () {
      var key = form.querySelector("input[name=token]");
      var s = session();
      try { if (s && key) s.setItem(BACK + form.getAttribute("data-keep-key"), key.value); } catch (e) { /* storage unavailable */ }
    });
  });
  Array.prototype.forEach.call(document.querySelectorAll("form[data-back-poll]"), function (form) {
    var s = session();
    var name = BACK + form.getAttribute("data-back-poll");
    var key = "";
    try { key = (s && s.getItem(name)) || ""; } catch (e) { /* storage unavailable */ }
    if (!key) return;
    form.querySelector("input[name=token]").value = key;
    form.hidden = false;
    var link = form.parentNode.querySelector("[data-back-link]");
    if (link) link.hidden = true;
    form.addEventListener("submit", function () {
      try { s.removeItem(name); } catch (e) { /* storage unavailable */ }
    });
  });

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
      // A link's field, or the receipt's <code>.
      var text = "value" in input ? input.value : input.textContent.trim();
      var pick = function () {
        if (input.select) { input.select(); return; }
        var range = document.createRange();
        range.selectNodeContents(input);
        var sel = window.getSelection();
        sel.removeAllRanges();
        sel.addRange(range);
      };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(text).then(done, pick);
      } else {
        pick();
        try { if (document.execCommand("copy")) done(); } catch (e) { /* selected for manual copy */ }
      }
    });
  });

  // Results, live (public results, and the admin page's): while the page
  // is open and shown, ask the API for the results every 10 s; when they
  // changed, fetch this page again (the same address, no cookie, nothing
  // else sent but the admin key where the page needs it) and put its results in
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
      // On the admin page the key goes along: as a Bearer header to the API
      // and in the body of the page's own "open" form, never in a URL.
      var keyField = live.hasAttribute("data-live-admin") ? document.querySelector("input[name=token]") : null;
      var get = function (url, type, form) {
        var headers = { Accept: type };
        var init = { credentials: "omit", cache: "no-store", headers: headers };
        if (keyField && !form) headers.Authorization = "Bearer " + keyField.value;
        if (form) {
          init.method = "POST";
          headers["Content-Type"] = "application/x-www-form-urlencoded";
          init.body = form;
        }
        return fetch(url, init).then(function (r) {
          if (!r.ok) throw new Error(String(r.status));
          return r.text();
        });
      };
      var again = keyField ? "token=" + encodeURIComponent(keyField.value) + "&action=open" : null;
      get(live.getAttribute("data-live-results"), "application/json").then(function (json) {
        if (last === null) last = json;
        if (json === last) return null;
        return get(location.pathname + location.search, "text/html", again).then(function (html) {
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
        // Every kind starts with the erase day: "<day>", "<day> <receipt>…".
        var ours = k && (k.indexOf(PREFIX) === 0 || k.indexOf(RECEIPT) === 0 || k.indexOf(ADMIN) === 0);
        var noteParts = (store.getItem(k) || "").split(" ");
        if (ours && noteParts[0] <= today) store.removeItem(k);
        // A vote's form code opens nothing after its day: it goes then.
        else if (k && k.indexOf(PREFIX) === 0 && noteParts.length > 1 && noteParts[1] < today) store.setItem(k, noteParts[0]);
      }
    } catch (e) { /* storage unavailable: nothing to tidy */ }

    // Just voted: remember it until the poll's erase day, with the form code
    // that opened the results (if any) and its day.
    var voted = document.getElementById("voted");
    if (voted) {
      var votedCode = voted.getAttribute("data-code");
      try { noteVote(voted.getAttribute("data-poll"), voted.getAttribute("data-until"), votedCode ? [today, votedCode] : null); } catch (e) { /* full or disabled */ }
    }

    // On the poll's page: say so, and keep the note until the poll's erase
    // day as it is now (its admin may have moved it).
    var note = document.getElementById("already-voted");
    if (note) {
      try {
        var notePoll = note.getAttribute("data-poll");
        if (store.getItem(PREFIX + notePoll)) {
          note.hidden = false;
          noteVote(notePoll, note.getAttribute("data-until"), null);
        }
      } catch (e) { /* storage unavailable */ }
    }
  }

  // The vote note of `poll`: "<erase day>", or "<erase day> <vote day>
  // <form code>"; `rest` replaces what follows the erase day (null: kept).
  function noteVote(poll, until, rest) {
    var after = rest || (store.getItem(PREFIX + poll) || "").split(" ").slice(1);
    store.setItem(PREFIX + poll, [until].concat(after).join(" "));
  }

  // Receipts. Read and written only here; a failing storage leaves the
  // pages as they are without script. A poll's entry is
  // "<erase day> <receipt> <receipt>…", oldest first: one per ballot this
  // browser cast (an older entry held one).
  function receiptsOf(poll) {
    if (!store) return [];
    try { return (store.getItem(RECEIPT + poll) || "").split(" ").slice(1).filter(Boolean); } catch (e) { return []; }
  }
  function receiptOf(poll) {
    var all = receiptsOf(poll);
    return all.length ? all[all.length - 1] : "";
  }
  function keepReceipts(poll, until, list) {
    if (!store) return;
    try {
      if (list.length) store.setItem(RECEIPT + poll, until + " " + list.join(" "));
      else store.removeItem(RECEIPT + poll);
    } catch (e) { /* full or disabled */ }
  }
  function forgetReceipt(poll, receipt) {
    if (!store) return;
    var rest = receiptsOf(poll).filter(function (r) { return receipt && plain(r) !== plain(receipt); });
    var until = "";
    try { until = (store.getItem(RECEIPT + poll) || "").split(" ")[0]; } catch (e) { /* storage unavailable */ }
    keepReceipts(poll, until, rest);
  }
  function forgetVote(poll) {
    if (!store) return;
    try { store.removeItem(PREFIX + poll); } catch (e) { /* storage unavailable */ }
  }
  // Comparable form of a receipt as typed: no dashes, spaces or case.
  function plain(r) { return (r || "").replace(/[\s-]/g, "").toUpperCase(); }

  // Just voted: keep the receipt, beside those of earlier ballots, until
  // the poll's erase day.
  var receiptBox = document.querySelector("[data-receipt-poll]");
  var receiptCode = document.getElementById("receipt");
  if (receiptBox && receiptCode && store) {
    var boxPoll = receiptBox.getAttribute("data-receipt-poll");
    var fresh = receiptCode.textContent.trim();
    var all = receiptsOf(boxPoll).filter(function (r) { return plain(r) !== plain(fresh); });
    keepReceipts(boxPoll, receiptBox.getAttribute("data-until"), all.concat([fresh]));
    // Said only once it is true: kept in this browser's storage.
    var kept = document.getElementById("receipt-kept");
    if (kept && receiptsOf(boxPoll).some(function (r) { return plain(r) === plain(fresh); })) kept.hidden = false;
  }

  // Share page after a vote from this browser: one's response(s) first,
  // the form folded behind "Answer again (someone else on this device)".
  var remembered = document.getElementById("receipt-remembered");
  var plainLink = document.getElementById("own-ballot-link");
  var answerArea = document.getElementById("answer-form");
  var answerAgain = document.getElementById("answer-again");
  function fold() {
    if (!answerArea || !answerAgain) return;
    answerArea.hidden = true;
    answerAgain.hidden = false;
  }
  if (answerAgain && answerArea) {
    answerAgain.addEventListener("click", function () {
      answerArea.hidden = false;
      answerAgain.hidden = true;
      var first = answerArea.querySelector("input:not([type=hidden]), select");
      if (first) first.focus();
    });
  }
  var rememberedPoll = remembered ? remembered.getAttribute("data-poll") : "";
  var kept = rememberedPoll ? receiptsOf(rememberedPoll) : [];
  if (remembered && kept.length) {
    remembered.hidden = false;
    // Kept until the poll's erase day as it is now.
    keepReceipts(rememberedPoll, remembered.getAttribute("data-until"), kept);
    if (note) note.hidden = true;
    if (plainLink) plainLink.hidden = true;
    fold();
    // Several ballots from this browser: a link to each (the receipt in
    // the fragment, which the ballot page takes off the address).
    var more = remembered.querySelector("[data-receipt-links]");
    var single = remembered.querySelector("a[data-receipt-open]");
    if (more && single && kept.length > 1) {
      single.hidden = true;
      kept.forEach(function (r, i) {
        var a = document.createElement("a");
        a.className = "button" + (i === kept.length - 1 ? "" : " secondary");
        a.href = single.getAttribute("href").split("?")[0] + "#receipt=" + encodeURIComponent(r);
        // Told apart by the start of each receipt (this voter's own, on
        // their own screen): "response 2 (receipt 7KQ2…)".
        a.textContent = more.getAttribute("data-nth").replace("{n}", String(i + 1)).replace("{r}", r.replace(/[^0-9A-Za-z]/g, "").slice(0, 4));
        more.appendChild(a);
        more.appendChild(document.createTextNode(" "));
      });
      more.hidden = false;
    }
    var forget = remembered.querySelector("[data-forget-receipt]");
    if (forget) {
      forget.addEventListener("click", function () {
        keepReceipts(rememberedPoll, "", []);
        remembered.hidden = true;
        if (plainLink) plainLink.hidden = false;
        // The vote note, which the remembered receipt stood in for, again.
        try {
          if (note && store.getItem(PREFIX + note.getAttribute("data-poll"))) note.hidden = false;
        } catch (e) { /* storage unavailable */ }
      });
    }
  } else if (note && !note.hidden) {
    fold();
  }

  // An afterVote poll's share page: the results again for a voter of this
  // browser, with the proof it keeps: a receipt (posted to the results
  // page, never in an address), or else, on the vote's day, the vote's form
  // code (in the link a voter is sent on after voting). Without either,
  // nothing is offered: the results would not open.
  var voterResults = document.getElementById("voter-results");
  if (voterResults && store) {
    var votedPoll = voterResults.getAttribute("data-poll");
    var byReceipt = voterResults.querySelector("form[data-voter-receipt]");
    var byCode = voterResults.querySelector("a[data-voter-link]");
    var proof = receiptOf(votedPoll);
    var noted = [];
    try { noted = (store.getItem(PREFIX + votedPoll) || "").split(" "); } catch (e) { /* storage unavailable */ }
    if (proof && byReceipt) {
      byReceipt.querySelector("input[name=receipt]").value = proof;
      byReceipt.hidden = false;
      voterResults.hidden = false;
    } else if (noted[1] === today && noted[2] && byCode) {
      byCode.href = byCode.getAttribute("data-voter-link").replace("{code}", encodeURIComponent(noted[2]));
      byCode.hidden = false;
      voterResults.hidden = false;
    }
    var typedLink = document.getElementById("voter-results-typed");
    if (typedLink && !voterResults.hidden) typedLink.hidden = true;
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
      if (field && field.value) forgetReceipt(poll, field.value);
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

  // Withdrawn: this browser forgets that receipt, and the vote note when
  // no other ballot of this browser is left.
  var withdrawn = document.querySelector("[data-forget-poll]");
  if (withdrawn && store) {
    var gonePoll = withdrawn.getAttribute("data-forget-poll");
    forgetReceipt(gonePoll, withdrawn.getAttribute("data-forget-receipt") || "");
    if (!receiptsOf(gonePoll).length) forgetVote(gonePoll);
  }

  // "Your poll is ready": keep the admin link in this browser (opt-in), and
  // warn before leaving while the link is neither copied nor kept.
  var keepField = document.getElementById("keep-admin-field");
  if (keepField) {
    var keepBox = document.getElementById("keep-admin");
    var keepKey = ADMIN + keepField.getAttribute("data-keep-poll");
    var saved = false;
    if (store && keepBox) {
      keepField.hidden = false;
      try { keepBox.checked = !!store.getItem(keepKey); } catch (e) { /* storage unavailable */ }
      keepBox.addEventListener("change", function () {
        try {
          if (keepBox.checked) {
            store.setItem(keepKey, keepField.getAttribute("data-until") + " " + keepField.getAttribute("data-keep-link") +
              " " + keepField.getAttribute("data-keep-title"));
          } else {
            store.removeItem(keepKey);
          }
        } catch (e) { keepBox.checked = false; }
      });
    }
    var adminField = document.getElementById("link-admin");
    var adminCopy = document.querySelector("button[data-copy=link-admin]");
    if (adminCopy) adminCopy.addEventListener("click", function () { saved = true; });
    if (adminField) adminField.addEventListener("copy", function () { saved = true; });
    // "Next: issue invite codes" leaves the page too: said here, once, in
    // words, with the admin link focused; pressed again, it goes on.
    var nextForm = document.querySelector("form[data-next-invites]");
    var saveFirst = document.getElementById("save-first");
    if (nextForm && saveFirst) {
      nextForm.addEventListener("submit", function (e) {
        if (saved || (keepBox && keepBox.checked)) return;
        if (saveFirst.hidden) {
          e.preventDefault();
          saveFirst.hidden = false;
          if (adminField) adminField.focus();
          return;
        }
        saved = true;
      });
    }
    window.addEventListener("beforeunload", function (e) {
      if (saved || (keepBox && keepBox.checked)) return;
      e.preventDefault();
      e.returnValue = "";
    });
  }

  // A poll deleted here, or not found at its admin address: it leaves
  // "Your polls on this device" (it would open to "Poll not found").
  var gone = document.querySelector("[data-forget-admin]");
  if (gone) {
    var gonePollId = gone.getAttribute("data-forget-admin") || (location.pathname.match(/^\/p\/([^\/]+)\/admin$/) || [])[1];
    if (gonePollId) {
      try { if (store) store.removeItem(ADMIN + gonePollId); } catch (e) { /* storage unavailable */ }
      try { session().removeItem(KEY + gonePollId); } catch (e) { /* storage unavailable */ }
    }
  }

  // Home page: the admin links kept in this browser, each with Forget.
  var myPolls = document.getElementById("my-polls");
  var myList = document.getElementById("my-polls-list");
  if (myPolls && myList && store) {
    var entries = [];
    try {
      for (var n = 0; n < store.length; n++) {
        var key = store.key(n);
        if (!key || key.indexOf(ADMIN) !== 0) continue;
        var parts = (store.getItem(key) || "").split(" ");
        if (parts.length < 3) continue;
        entries.push({ key: key, until: parts[0], link: parts[1], title: parts.slice(2).join(" ") });
      }
    } catch (e) { /* storage unavailable: nothing listed */ }
    entries.sort(function (a, b) { return a.title.localeCompare(b.title); });
    entries.forEach(function (entry) {
      var li = document.createElement("li");
      var a = document.createElement("a");
      a.href = entry.link;
      a.textContent = entry.title;
      var forgetOne = document.createElement("button");
      forgetOne.type = "button";
      forgetOne.className = "secondary";
      forgetOne.textContent = myPolls.getAttribute("data-forget");
      var named = document.createElement("span");
      named.className = "visually-hidden";
      named.textContent = " " + entry.title;
      forgetOne.appendChild(named);
      forgetOne.addEventListener("click", function () {
        try { store.removeItem(entry.key); } catch (e) { /* storage unavailable */ }
        var next = li.nextElementSibling || li.previousElementSibling;
        myList.removeChild(li);
        if (!myList.children.length) myPolls.hidden = true;
        else if (next) next.querySelector("button").focus();
      });
      li.appendChild(a);
      li.appendChild(document.createTextNode(" "));
      li.appendChild(forgetOne);
      myList.appendChild(li);
    });
    myPolls.hidden = entries.length === 0;
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
  // Its one-time code, kept with the page's state: the browser puts a text
  // field's value back when the page is shown again by Back (fetched
  // afresh, with a fresh code) only if the value differs from the field's
  // default, so the default is emptied. Sent again after Back, the form
  // then carries its used code and is answered "already sent", not with a
  // second poll.
  var onceField = createForm && createForm.querySelector("input[data-once]");
  if (onceField) {
    var onceCode = onceField.value;
    onceField.value = onceCode;
    onceField.defaultValue = "";
  }
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
  // ones first, and the selects hold the ranks, so the form sends what is
  // seen. Only what the voter touches changes (issue 25): "move up" ranks an
  // unranked row after the last rank, or swaps a ranked row with the one
  // ranked just above; "move down" swaps with the one just below, and takes
  // the last ranked row out of the ranking; a rank chosen in a select is
  // that rank (a row that held it takes the chosen row's old rank). Every
  // rank that changed is announced. A gap a voter leaves in the selects is
  // theirs to see: the server says so, and nothing is renumbered behind
  // their back.
  Array.prototype.forEach.call(document.querySelectorAll("ol[data-ranking]"), function (list) {
    var live = document.getElementById(list.getAttribute("data-live"));
    var n = list.children.length;
    function rows() { return Array.prototype.slice.call(list.children); }
    function select(row) { return row.querySelector("select"); }
    function rank(row) { var v = parseInt(select(row).value, 10); return v > 0 ? v : 0; }
    // The rank each row had after the last change: a select's change event
    // comes after its value changed, and the old rank is needed then.
    function setRank(row, r) { select(row).value = r ? String(r) : ""; row.setAttribute("data-rank", String(r)); }
    function optionText(row) { return row.querySelector("label").textContent; }
    function holding(r, except) { return rows().filter(function (x) { return x !== except && rank(x) === r; })[0]; }
    function highest() { return rows().reduce(function (m, x) { return Math.max(m, rank(x)); }, 0); }
    var home = rows();
    // Sort by rank (unranked last, in the page's order). Rows are put back
    // around `keep`, so the focused control never leaves the page.
    function arrange(keep) {
      var order = rows().slice().sort(function (a, b) {
        return ((rank(a) || Infinity) - (rank(b) || Infinity)) || (home.indexOf(a) - home.indexOf(b));
      });
      var at = order.indexOf(keep);
      for (var i = at - 1; i >= 0; i--) list.insertBefore(order[i], order[i + 1]);
      for (var j = at + 1; j < order.length; j++) list.insertBefore(order[j], order[j - 1].nextSibling);
    }
    function update() {
      rows().forEach(function (r) {
        r.querySelector("[data-move=up]").disabled = rank(r) === 1 || (!rank(r) && highest() >= n);
        r.querySelector("[data-move=down]").disabled = !rank(r);
      });
    }
    function announce(changed) {
      if (!live) return;
      live.textContent = changed.map(function (row) {
        var r = rank(row);
        var text = r ? list.getAttribute("data-moved").replace("{rank}", String(r)) : list.getAttribute("data-unranked");
        return text.replace("{option}", optionText(row));
      }).join(" ");
    }
    // Gives `row` rank `r`; a row holding `r` takes `row`'s old rank.
    function give(row, r) {
      var old = rank(row);
      var other = r ? holding(r, row) : null;
      if (other) setRank(other, old);
      setRank(row, r);
      return other ? [row, other] : [row];
    }
    function move(row, dir, button) {
      var r = rank(row);
      var changed;
      if (dir < 0) {
        if (r === 1) return;
        changed = r ? give(row, r - 1) : give(row, highest() + 1);
      } else {
        if (!r) return;
        changed = holding(r + 1, row) || r < highest() ? give(row, r + 1) : give(row, 0);
      }
      arrange(row);
      update();
      if (button.disabled) row.querySelector(dir < 0 ? "[data-move=down]" : "[data-move=up]").focus();
      announce(changed);
    }
    // The move buttons, named for their option: "Move up, Chess".
    function moveButton(row, dir, arrow, name) {
      var label = row.querySelector("label");
      var button = document.createElement("button");
      button.className = "secondary move";
      button.type = "button";
      button.setAttribute("data-move", dir);
      button.title = name;
      var shown = document.createElement("span");
      shown.setAttribute("aria-hidden", "true");
      shown.textContent = arrow;
      var said = document.createElement("span");
      said.className = "visually-hidden";
      said.textContent = name + ", ";
      var option = document.createElement("span");
      if (label.hasAttribute("lang")) option.setAttribute("lang", label.getAttribute("lang"));
      option.textContent = label.textContent;
      said.appendChild(option);
      button.appendChild(shown);
      button.appendChild(said);
      return button;
    }
    arrange(rows()[0]);
    rows().forEach(function (row) {
      row.setAttribute("data-rank", String(rank(row)));
      var buttons = document.createElement("span");
      buttons.className = "rank-move";
      buttons.appendChild(moveButton(row, "up", "\u25B2", list.getAttribute("data-up")));
      buttons.appendChild(moveButton(row, "down", "\u25BC", list.getAttribute("data-down")));
      row.appendChild(buttons);
      row.querySelector("[data-move=up]").addEventListener("click", function (e) { move(row, -1, e.currentTarget); });
      row.querySelector("[data-move=down]").addEventListener("click", function (e) { move(row, 1, e.currentTarget); });
      // The rank chosen in the select is the row's rank: a row that held it
      // takes this row's old one.
      select(row).addEventListener("change", function () {
        var r = rank(row);
        setRank(row, parseInt(row.getAttribute("data-rank"), 10) || 0);
        var changed = give(row, r);
        arrange(row);
        update();
        announce(changed);
      });
    });
    update();
  });

  // Vote form, multiple choice: a box beyond the question's maximum is
  // unticked at once, and the question says why (the server checks again).
  Array.prototype.forEach.call(document.querySelectorAll("fieldset[data-max]"), function (set) {
    var most = parseInt(set.getAttribute("data-max"), 10) || 0;
    var said = set.querySelector("[data-max-live]");
    set.addEventListener("change", function (e) {
      var box = e.target;
      if (!box || box.type !== "checkbox") return;
      var over = box.checked && set.querySelectorAll("input[type=checkbox]:checked").length > most;
      if (over) box.checked = false;
      // A note while the maximum is reached (the answer stays valid), gone
      // as soon as a box is free again.
      var full = set.querySelectorAll("input[type=checkbox]:checked").length >= most;
      if (said && (over || !full)) {
        said.textContent = over ? set.getAttribute("data-max-text") : "";
        said.hidden = !over;
      }
    });
  });

  // Vote form, an optional schedule: "No answer" and the slots' answers
  // exclude each other (without script the server lets "No answer" win).
  Array.prototype.forEach.call(document.querySelectorAll("fieldset.q-schedule"), function (set) {
    var none = set.querySelector(".no-answer input");
    if (!none) return;
    set.addEventListener("change", function (e) {
      var radio = e.target;
      if (!radio || radio.type !== "radio") return;
      if (radio === none) {
        Array.prototype.forEach.call(set.querySelectorAll(".slot input:checked"), function (r) { r.checked = false; });
      } else {
        none.checked = false;
      }
    });
  });

  var summary = document.querySelector("[data-focus]");
  if (summary) summary.focus();
})();
