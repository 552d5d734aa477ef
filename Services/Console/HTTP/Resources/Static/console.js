// StudyStack console: small improvements on pages that work without it. No framework.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  document.documentElement.classList.add("js");
  // The study's menu scrolls on its own; the page that is open stays in view in it.
  const current = document.querySelector(".study-nav a[aria-current=page]");
  if (current) current.scrollIntoView({ block: "nearest" });
  // Choosing another response type (or frequency) shows its fields at once: the page's own
  // "Show its fields" button is pressed for the admin. Nothing is saved by it.
  // (Listened for on the document, so rows added by the script below behave the same.)
  document.addEventListener("change", (event) => {
    const select = event.target;
    if (!(select instanceof HTMLSelectElement) || !select.dataset.show) return;
    const button = document.getElementById(select.dataset.show);
    if (button && select.form) select.form.requestSubmit(button);
  });
  // After a refused save, move the keyboard focus to the list of what to fix.
  const problems = document.getElementById("problems");
  if (problems) {
    problems.setAttribute("tabindex", "-1");
    problems.focus();
  }
  // An optional part's fields are shown only while its checkbox is checked (without this
  // script they are always shown, and ignored when it is unchecked).
  const syncToggle = (box) => {
    const body = document.getElementById(box.dataset.toggles);
    if (body) body.classList.toggle("off", !box.checked);
  };
  for (const box of document.querySelectorAll("input[data-toggles]")) syncToggle(box);
  document.addEventListener("change", (event) => {
    if (event.target instanceof HTMLInputElement && event.target.dataset.toggles) syncToggle(event.target);
  });
  // "Add" puts a new row on the page at once, from the row the page drew for it in a
  // <template> (its index and number filled in), and counts it in the list's hidden count, as
  // the page's own round trip would; nothing is saved until Save. Without the script, or where
  // the page has no template (the list is full), the button asks the server as before.
  document.addEventListener("click", (event) => {
    const button = event.target instanceof Element ? event.target.closest("button[name=op]") : null;
    if (!button || !button.value.startsWith("add ") || !button.form) return;
    const fieldset = button.closest("fieldset.list");
    const template = fieldset && Array.from(fieldset.querySelectorAll(":scope > template.new-row"))
      .find((candidate) => candidate.dataset.op === button.value);
    const count = fieldset && Array.from(button.form.querySelectorAll("input[type=hidden]"))
      .find((input) => input.name === `${button.value.slice(4)}#count`);
    if (!template || !count) return;
    const index = Number(count.value);
    if (!Number.isInteger(index) || index >= Number(template.dataset.max)) return;
    event.preventDefault();
    const html = template.innerHTML.replaceAll(template.dataset.token, String(index))
      .replaceAll(template.dataset.number, String(index + 1));
    const table = fieldset.querySelector(":scope > table.rows");
    const holder = document.createElement(table ? "tbody" : "div");
    holder.innerHTML = html;
    const row = holder.firstElementChild;
    if (!row) return;
    if (table) {
      table.hidden = false;
      table.tBodies[0].append(row);
    } else {
      template.before(row);
    }
    const none = fieldset.querySelector(":scope > p.none");
    if (none) none.remove();
    // The row that was last may move down now.
    const rows = Array.from(table ? table.tBodies[0].rows : fieldset.querySelectorAll(":scope > div.row"));
    const previous = rows[rows.length - 2];
    if (previous) {
      const down = previous.querySelector("button[name=op][value^='down ']");
      if (down) down.disabled = false;
    }
    count.value = String(index + 1);
    for (const box of row.querySelectorAll("input[data-toggles]")) syncToggle(box);
    button.form.dispatchEvent(new Event("change", { bubbles: true }));
    const first = row.querySelector("input:not([type=hidden]), select, textarea");
    if (first) first.focus();
  });
  // A form that takes a while (a large token batch) shows its progress note and cannot be sent twice.
  for (const form of document.querySelectorAll("form[data-progress]")) {
    form.addEventListener("submit", () => {
      const note = document.getElementById(form.dataset.progress);
      if (note) note.hidden = false;
      for (const button of form.querySelectorAll("button[type=submit]")) button.disabled = true;
    });
  }
  // An export is read here rather than by the browser's download, so its progress can be shown:
  // lines received against the rows the page counted (plus a header line per CSV file). Without
  // this script the link downloads the file directly.
  for (const link of document.querySelectorAll("a[data-export-progress]")) {
    link.addEventListener("click", async (event) => {
      const note = document.getElementById(link.dataset.exportProgress);
      if (!note || !window.ReadableStream) return;
      event.preventDefault();
      const bar = note.querySelector("progress");
      const text = note.querySelector(".progress-text");
      const expected = Number(link.dataset.exportLines) + Number(link.dataset.exportFiles);
      note.hidden = false;
      note.dataset.state = "running";
      try {
        const response = await fetch(link.href, { credentials: "same-origin" });
        if (!response.ok) throw new Error(`the server answered ${response.status}`);
        const reader = response.body.getReader();
        const parts = [];
        let lines = 0;
        let bytes = 0;
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          parts.push(value);
          bytes += value.length;
          for (const byte of value) if (byte === 10) lines += 1;
          const share = expected > 0 ? Math.min(lines / expected, 1) : 0;
          bar.value = share;
          text.textContent = `${lines.toLocaleString()} of ${expected.toLocaleString()} lines, ${(bytes / 1048576).toFixed(1)} MB received`;
        }
        const disposition = response.headers.get("Content-Disposition") || "";
        const name = (disposition.match(/filename="([^"]+)"/) || [])[1] || "export";
        const url = URL.createObjectURL(new Blob(parts, { type: response.headers.get("Content-Type") || "" }));
        const save = document.createElement("a");
        save.href = url;
        save.download = name;
        document.body.append(save);
        save.click();
        save.remove();
        setTimeout(() => URL.revokeObjectURL(url), 60000);
        bar.value = 1;
        text.textContent = `Done: ${lines.toLocaleString()} lines, ${(bytes / 1048576).toFixed(1)} MB, saved as ${name}.`;
        note.dataset.state = "done";
      } catch (error) {
        text.textContent = `The export did not finish (${error.message}); try again.`;
        note.dataset.state = "failed";
      }
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
  // A changed form asks before the page is left (a link, another page, closing the tab); its own
  // buttons do not ask. A page drawn with rows changed and not saved starts as changed.
  for (const form of document.querySelectorAll("form[data-guard]")) {
    let changed = form.dataset.unsaved === "true";
    const mark = () => { changed = true; };
    form.addEventListener("input", mark);
    form.addEventListener("change", mark);
    form.addEventListener("submit", () => { changed = false; });
    window.addEventListener("beforeunload", (event) => {
      if (!changed) return;
      event.preventDefault();
      event.returnValue = "";
    });
  }
  // Times of day: another empty time input appears once the last one is filled (up to 48).
  document.addEventListener("input", (event) => {
    const set = event.target instanceof Element ? event.target.closest("fieldset.times") : null;
    if (!set) return;
    const inputs = set.querySelectorAll("input");
    const last = inputs[inputs.length - 1];
    if (!last || last.value === "" || inputs.length >= 48) return;
    const next = last.cloneNode();
    next.value = "";
    next.removeAttribute("aria-invalid");
    const legend = set.querySelector("legend");
    next.setAttribute("aria-label", `${legend ? legend.textContent : "Time"}: time ${inputs.length + 1}`);
    last.after(next);
  });
  // The grid's columns: a tick box per column shows or hides it; the choice is kept in this
  // browser per study and table. (Without this script every column is shown, and scrolls.)
  const picker = document.getElementById("column-picker");
  const grid = document.getElementById("grid");
  if (picker && grid) {
    picker.hidden = false;
    const key = `studystack-columns:${picker.dataset.table}`;
    const boxes = Array.from(picker.querySelectorAll("input[data-column]"));
    let hidden = [];
    try { hidden = JSON.parse(localStorage.getItem(key) || "[]"); } catch { hidden = []; }
    const apply = () => {
      const off = new Set(boxes.filter((box) => !box.checked).map((box) => Number(box.dataset.column)));
      for (const row of grid.rows) {
        for (const [index, cell] of Array.from(row.cells).entries()) cell.hidden = off.has(index);
      }
      picker.querySelector(".shown-count").textContent = String(boxes.length - off.size);
      try { localStorage.setItem(key, JSON.stringify(Array.from(off))); } catch { /* private mode: not kept */ }
    };
    for (const box of boxes) {
      if (hidden.includes(Number(box.dataset.column))) box.checked = false;
      box.addEventListener("change", apply);
    }
    apply();
  }
  // Buttons that change something for good ask once more before the form goes.
  for (const button of document.querySelectorAll("button[data-confirm]")) {
    button.addEventListener("click", (event) => {
      if (!window.confirm(button.dataset.confirm)) event.preventDefault();
    });
  }
});
