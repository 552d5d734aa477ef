// StudyStack console: small improvements on pages that work without it. No framework.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  document.documentElement.classList.add("js");
  // Choosing another response type (or frequency) shows its fields at once: the page's own
  // "Show its fields" button is pressed for the admin. Nothing is saved by it.
  for (const select of document.querySelectorAll("select[data-show]")) {
    select.addEventListener("change", () => {
      const button = document.getElementById(select.dataset.show);
      if (button && select.form) select.form.requestSubmit(button);
    });
  }
  // After a refused save, move the keyboard focus to the list of what to fix.
  const problems = document.getElementById("problems");
  if (problems) {
    problems.setAttribute("tabindex", "-1");
    problems.focus();
  }
  // An optional part's fields are shown only while its checkbox is checked (without this
  // script they are always shown, and ignored when it is unchecked).
  for (const box of document.querySelectorAll("input[data-toggles]")) {
    const body = document.getElementById(box.dataset.toggles);
    if (!body) continue;
    const sync = () => body.classList.toggle("off", !box.checked);
    box.addEventListener("change", sync);
    sync();
  }
  // A form that takes a while (a large token batch) shows its progress note and cannot be sent twice.
  for (const form of document.querySelectorAll("form[data-progress]")) {
    form.addEventListener("submit", () => {
      const note = document.getElementById(form.dataset.progress);
      if (note) note.hidden = false;
      for (const button of form.querySelectorAll("button[type=submit]")) button.disabled = true;
    });
  }
  // Copy buttons beside values shown once (an app's credentials).
  for (const button of document.querySelectorAll("button[data-copy]")) {
    button.addEventListener("click", async () => {
      const field = document.getElementById(button.dataset.copy);
      if (!field) return;
      try {
        await navigator.clipboard.writeText(field.value);
        button.textContent = "Copied";
      } catch {
        field.select();
      }
    });
  }
  // Buttons that change something for good ask once more before the form goes.
  for (const button of document.querySelectorAll("button[data-confirm]")) {
    button.addEventListener("click", (event) => {
      if (!window.confirm(button.dataset.confirm)) event.preventDefault();
    });
  }
});
