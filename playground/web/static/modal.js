// The modal the bot opened for the person, drawn by the server: shown over
// the workspace, its fields read and posted on Submit, closed on Cancel.
// A redrawing of the same view (the bot's errors under its fields) keeps
// what the person typed.
(() => {
  "use strict";
  const host = document.querySelector('[data-testid="modal-host"]');
  let post = null;

  // values reads the form's fields by block id, as a view's state holds
  // them: a text or number, a chosen option's value, or several.
  function values(form) {
    const out = {};
    for (const f of form.querySelectorAll("[data-block-id]")) {
      const id = f.dataset.blockId;
      switch (f.dataset.type) {
        case "radio_buttons":
        case "checkboxes":
          out[id] = Array.from(f.querySelectorAll("input:checked"), (i) => i.value);
          break;
        case "static_select":
        case "multi_static_select":
          out[id] = Array.from(f.querySelector("select").selectedOptions, (o) => o.value).filter((v) => v !== "");
          break;
        default: {
          const input = f.querySelector("input, textarea");
          out[id] = input && input.value !== "" ? [input.value] : [];
        }
      }
    }
    return out;
  }

  // restore puts values back in a form drawn anew.
  function restore(form, vals) {
    for (const f of form.querySelectorAll("[data-block-id]")) {
      const v = vals[f.dataset.blockId];
      if (!v) continue;
      for (const el of f.querySelectorAll("input, textarea, select")) {
        if (el.type === "radio" || el.type === "checkbox") {
          el.checked = v.includes(el.value);
        } else if (el.tagName === "SELECT") {
          for (const o of el.options) o.selected = v.includes(o.value);
        } else {
          el.value = v[0] ?? "";
        }
      }
    }
  }

  function current() { return host.querySelector('[data-testid="modal"]'); }

  async function submit(form) {
    const button = form.querySelector('[data-testid="modal-submit"]');
    if (button) button.disabled = true;
    try {
      await post("/modal/submit", { view_id: form.dataset.viewId, values: values(form) });
    } catch (err) {
      console.warn(String(err));
    } finally {
      if (button && button.isConnected) button.disabled = false;
    }
  }

  async function close(form) {
    try {
      await post("/modal/close", { view_id: form.dataset.viewId });
    } catch (err) {
      console.warn(String(err));
    }
  }

  window.pgModal = {
    // show draws the modal the server sent ("": none is open).
    show(html, poster) {
      post = poster;
      const old = current();
      const tpl = document.createElement("template");
      tpl.innerHTML = html.trim();
      const next = tpl.content.querySelector('[data-testid="modal"]');
      if (old && next && old.dataset.viewId === next.dataset.viewId) restore(next, values(old));
      host.replaceChildren(tpl.content);
      const form = current();
      if (!form) return;
      form.addEventListener("submit", (e) => { e.preventDefault(); submit(form); });
      for (const b of form.querySelectorAll("[data-modal-close]")) {
        b.addEventListener("click", () => close(form));
      }
      if (!old || !next || old.dataset.viewId !== next.dataset.viewId) {
        form.querySelector("input, textarea, select")?.focus();
      }
    },
  };
})();
