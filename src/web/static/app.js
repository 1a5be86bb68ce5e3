// anonpoll's only script. Every page works without it; it adds:
// - the admin key: read from the URL fragment (#key), which the browser never
//   sends to the server, put in the key form, sent in the POST body, and
//   removed from the address bar and history;
// - copy buttons next to links;
// - a note in localStorage after a vote (never sent anywhere), so the poll's
//   page can say "already answered"; notes are dropped after the poll's erase day;
// - focus on the error summary of a form that came back with problems;
// - on the creation form, only the fields of each question's chosen type
//   (without script all are shown; the server reads those of the type);
// - on the vote form, "move up"/"move down" buttons for rankings, which keep
//   the rank selects in step with the order of the rows.
"use strict";

(function () {
  var PREFIX = "anonpoll:voted:";
  var today = new Date().toISOString().slice(0, 10);

  function storage() {
    try { return window.localStorage; } catch (e) { return null; }
  }

  // Admin key from the fragment.
  var tokenForm = document.querySelector("form[data-token-form]");
  if (tokenForm && location.hash.length > 1) {
    var key = decodeURIComponent(location.hash.slice(1));
    history.replaceState(null, "", location.pathname + location.search);
    var field = tokenForm.querySelector("input[name=token]");
    if (field && key) {
      field.value = key;
      tokenForm.submit();
    }
  }

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

  var store = storage();
  if (store) {
    // Drop the notes of polls that have been erased since.
    try {
      for (var i = store.length - 1; i >= 0; i--) {
        var k = store.key(i);
        if (k && k.indexOf(PREFIX) === 0 && (store.getItem(k) || "") <= today) store.removeItem(k);
      }
    } catch (e) { /* storage unavailable: nothing to tidy */ }

    // Just voted: remember it until the poll's erase day.
    var voted = document.getElementById("voted");
    if (voted) {
      try { store.setItem(PREFIX + voted.getAttribute("data-poll"), voted.getAttribute("data-until")); } catch (e) { /* full or disabled */ }
    }

    // On the poll's page: say so.
    var note = document.getElementById("already-voted");
    if (note) {
      try {
        if (store.getItem(PREFIX + note.getAttribute("data-poll"))) note.hidden = false;
      } catch (e) { /* storage unavailable */ }
    }
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

  var summary = document.querySelector("[data-focus]");
  if (summary) summary.focus();
})();
