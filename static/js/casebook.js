// Casebook's only script beyond htmx: small behaviours that need no inline code, so the
// Content Security Policy can forbid inline scripts.

// <button data-copy="text">: copy the text to the clipboard.
document.addEventListener("click", (event) => {
  const button = event.target.closest("[data-copy]");
  if (!button) return;
  navigator.clipboard?.writeText(button.dataset.copy);
  button.textContent = "Copied";
});

// data-confirm="question" on a form or a submit button: ask before submitting.
document.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-confirm]");
  if (button && !window.confirm(button.dataset.confirm)) event.preventDefault();
}, true);
document.addEventListener("submit", (event) => {
  if (event.target.matches("[hx-post], [hx-get]")) return; // htmx asks (htmx:confirm below)
  const message = event.target.dataset.confirm;
  if (message && !window.confirm(message)) event.preventDefault();
});
document.addEventListener("htmx:confirm", (event) => {
  const message = event.detail.elt.closest("[data-confirm]")?.dataset.confirm;
  if (!message) return;
  event.preventDefault();
  if (window.confirm(message)) event.detail.issueRequest(true);
});

// The upload form: a file dropped on the drop zone (or anywhere on the page, which has
// one zone) is the one uploaded, its name shown; htmx's upload progress drives the progress
// bar, and the status line says what happens once the bytes are sent.
function dropzoneFor(event) {
  if (!event.dataTransfer?.types.includes("Files")) return null;
  return event.target.closest?.(".dropzone") ?? document.querySelector(".dropzone");
}
document.addEventListener("dragover", (event) => {
  const zone = dropzoneFor(event);
  if (!zone) return;
  event.preventDefault();
  zone.classList.add("dragging");
});
document.addEventListener("dragleave", (event) => {
  const zone = event.target.closest?.(".dropzone");
  if (zone && !zone.contains(event.relatedTarget)) zone.classList.remove("dragging");
});
document.addEventListener("drop", (event) => {
  const zone = dropzoneFor(event);
  if (!zone) return;
  event.preventDefault();
  zone.classList.remove("dragging");
  const input = zone.querySelector("input[type=file]");
  input.files = event.dataTransfer.files;
  input.dispatchEvent(new Event("change", { bubbles: true }));
});
document.addEventListener("change", (event) => {
  const input = event.target;
  if (!input.matches(".dropzone input[type=file]")) return;
  const chosen = input.closest(".dropzone").querySelector("[data-chosen]");
  const file = input.files[0];
  if (chosen) chosen.textContent = file ? `${file.name} (${(file.size / 1048576).toFixed(1)} MB)` : "";
});
function uploadStatus(form, text) {
  const status = form?.querySelector("[data-upload-status]");
  if (status) status.textContent = text;
}
document.addEventListener("htmx:xhr:progress", (event) => {
  const form = event.target.closest("form");
  const bar = form?.querySelector(".upload-progress");
  if (!bar || !event.detail.lengthComputable) return;
  const share = (event.detail.loaded / event.detail.total) * 100;
  bar.hidden = false;
  bar.value = share;
  uploadStatus(form, share < 100
    ? `Uploading: ${Math.floor(share)}%`
    : "Uploaded. Reading the file; the results page opens as soon as it is ready.");
});
document.addEventListener("htmx:responseError", (event) => {
  uploadStatus(event.target.closest(".upload-form"),
    `The upload failed (${event.detail.xhr.status} ${event.detail.xhr.statusText}); please try again.`);
});
document.addEventListener("htmx:sendError", (event) => {
  uploadStatus(event.target.closest(".upload-form"),
    "The upload did not reach Casebook (is the network down?); please try again.");
});

// The page's one live region for swaps (base.html's #announcer): the words the server sends
// with a swap (the "announce" event of an HX-Trigger header). Emptied first, so that the
// same words twice are said twice.
function announce(words) {
  const region = document.getElementById("announcer");
  if (!region || !words) return;
  region.textContent = "";
  setTimeout(() => { region.textContent = words; }, 100);
}
document.addEventListener("announce", (event) => announce(event.detail.value));
// The messages a page loads with ("Scoring done: 200 runs.") are a live region of their own,
// and are put back into it a moment after the load: what a live region holds as the page
// loads is not said. (Copied into #announcer, their words would be on the page twice.)
document.addEventListener("DOMContentLoaded", () => {
  const list = document.querySelector(".messages[aria-live]");
  if (!list) return;
  const messages = [...list.children];
  list.replaceChildren();
  setTimeout(() => list.replaceChildren(...messages), 100);
});

// A swap that the reader asked for (a click, a key, a change: not a part loading itself or a
// poll) and that took away the element holding the focus would leave it on <body>, the
// keyboard user lost. It goes instead to, in order: the element of the same id in the new
// content (a select that re-rendered the form it is in), the new content's first invalid
// field, its [data-swap-focus] (the count above a table, the pressed status button, an added
// row: its first control), else the swapped element itself.
let focusedId = "";
document.addEventListener("htmx:beforeSwap", () => { focusedId = document.activeElement?.id ?? ""; });
const ASKED = ["click", "submit", "change", "input", "keyup", "keydown", "search"];
const CONTROL = "input:not([type=hidden]), select, textarea, button, a[href], [tabindex]";
document.addEventListener("htmx:afterSettle", (event) => {
  if (!ASKED.includes(event.detail.requestConfig?.triggeringEvent?.type)) return;
  const active = document.activeElement;
  if (active && active !== document.body && active.isConnected) return;
  const swapped = event.detail.target;
  const root = swapped?.isConnected ? swapped : swapped?.id && document.getElementById(swapped.id);
  if (!root) return;
  const same = focusedId && document.getElementById(focusedId);
  let landing = (same && root.contains(same) ? same : null)
    ?? root.querySelector('[aria-invalid="true"]') ?? root.querySelector("[data-swap-focus]") ?? root;
  if (landing !== root && !landing.matches(CONTROL)) landing = landing.querySelector(CONTROL) ?? landing;
  if (!landing.matches(CONTROL)) landing.tabIndex = -1;
  landing.focus();
});
