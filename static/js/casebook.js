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
