// Keyboard triage on the run page: the page marks what each key does with data- attributes
// (links with data-triage, buttons with data-triage-key, the comment box with
// data-triage-comment); this file only presses them, so the page works the same without it.
//
//   j / k    next / previous failure (j: the next run, in a review queue)
//   1–6      set a status                    a  assign to me
//   c        focus the comment box           Enter (or Ctrl+Enter) in it posts
//   ?        show or hide the key list
//   a letter a team gave one of its review labels (data-label-key) toggles that label
//
// On the submission page, j / k move through the runs table's rows (data-run-row), giving
// the focus to the row's link to its run (data-run-link): Enter opens it.

const ADVANCE_KEY = "casebook.triage.advance";

// Keys typed into a text field are text, not commands (a checkbox or a button is fine).
const NOT_TEXT = ["checkbox", "radio", "button", "submit", "reset"];
function typing(target) {
  if (target.closest?.("textarea, select, [contenteditable]")) return true;
  return target.matches?.("input") && !NOT_TEXT.includes(target.type);
}

function press(selector) {
  const element = document.querySelector(selector);
  if (!element) return false;
  element.click();
  return true;
}

// The row holding the focus, else the highlighted one: where j and k move from.
function moveInList(step) {
  const rows = [...document.querySelectorAll("[data-run-row]")];
  if (!rows.length) return false;
  const from = rows.findIndex(
    (row) => row.contains(document.activeElement) || row.classList.contains("current"),
  );
  const to = from < 0 ? 0 : Math.min(rows.length - 1, Math.max(0, from + step));
  for (const row of rows) row.classList.toggle("current", row === rows[to]);
  rows[to].querySelector("[data-run-link]")?.focus({ preventScroll: true });
  rows[to].scrollIntoView({ block: "nearest" });
  return true;
}

function toggleHelp() {
  const dialog = document.getElementById("triage-keys");
  if (!dialog) return;
  if (dialog.open) dialog.close();
  else dialog.showModal();
}

document.addEventListener("keydown", (event) => {
  if (event.defaultPrevented || event.altKey || event.metaKey) return;
  const target = event.target;
  if (target.matches?.("[data-triage-comment]")) {
    // Enter posts (Shift+Enter is a new line); Escape leaves the box for the other keys.
    if (event.key === "Enter" && !event.shiftKey && target.value.trim()) {
      event.preventDefault();
      target.blur(); // posted: the next key is a command again
      target.form.requestSubmit();
    } else if (event.key === "Escape") {
      target.blur();
    }
    return;
  }
  if (event.ctrlKey || typing(target)) return;
  let done = false;
  if (event.key === "j") done = press('[data-triage="next"]') || moveInList(1);
  else if (event.key === "k") done = press('[data-triage="previous"]') || moveInList(-1);
  else if (/^[1-6]$/.test(event.key)) done = press(`[data-triage-key="${event.key}"]`);
  else if (event.key === "a") done = press('[data-triage-key="a"]');
  else if (event.key === "c") {
    const box = document.querySelector("[data-triage-comment]");
    if (box) {
      box.focus();
      done = true;
    }
  } else if (event.key === "?") {
    toggleHelp();
    done = true;
  } else if (/^[a-z]$/.test(event.key)) {
    done = press(`[data-label-key="${event.key}"]`);
  }
  if (done) event.preventDefault();
});

document.addEventListener("click", (event) => {
  if (event.target.closest("[data-triage-help]")) toggleHelp();
});

// "then open the next failure" is remembered across runs: the panel is re-rendered after
// each change, and a reviewer going through failures wants it to stay as they left it.
function restoreAdvance(root) {
  for (const box of root.querySelectorAll("[data-triage-advance]")) {
    box.checked = localStorage.getItem(ADVANCE_KEY) === "on";
  }
}
document.addEventListener("change", (event) => {
  if (event.target.matches("[data-triage-advance]")) {
    localStorage.setItem(ADVANCE_KEY, event.target.checked ? "on" : "off");
  }
});
document.addEventListener("DOMContentLoaded", () => restoreAdvance(document));
document.addEventListener("htmx:afterSwap", () => restoreAdvance(document));
