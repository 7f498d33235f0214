// Attaching files: each composer's button and a drop on the composer add
// files to it; sending uploads them (/attach) before the message, which
// carries their ids. Exposed to app.js as window.pgFiles.
(() => {
  "use strict";
  const waiting = new Map(); // form → File[]

  function draw(form) {
    const list = form.querySelector(".pg-attachments");
    list.replaceChildren(...(waiting.get(form) || []).map((f) => {
      const chip = document.createElement("span");
      chip.className = "pg-chip";
      chip.dataset.testid = "attachment";
      chip.textContent = f.name; // text, never markup: a name is anyone's
      return chip;
    }));
  }

  function add(form, files) {
    waiting.set(form, (waiting.get(form) || []).concat(Array.from(files)));
    draw(form);
  }

  function base64(file) {
    return new Promise((resolve, reject) => {
      const r = new FileReader();
      r.onload = () => resolve(String(r.result).replace(/^data:[^,]*,/, ""));
      r.onerror = () => reject(r.error);
      r.readAsDataURL(file);
    });
  }

  document.querySelectorAll(".pg-composer").forEach((form) => {
    const input = form.querySelector('input[type="file"]');
    form.querySelector("[data-attach]").addEventListener("click", () => input.click());
    input.addEventListener("change", () => {
      add(form, input.files);
      input.value = "";
    });
    form.addEventListener("dragover", (e) => {
      e.preventDefault();
      form.classList.add("pg-drop");
    });
    form.addEventListener("dragleave", () => form.classList.remove("pg-drop"));
    form.addEventListener("drop", (e) => {
      e.preventDefault();
      form.classList.remove("pg-drop");
      if (e.dataTransfer && e.dataTransfer.files.length) add(form, e.dataTransfer.files);
    });
  });

  window.pgFiles = {
    pending: (form) => (waiting.get(form) || []).length,
    // take uploads the form's files with post and returns their ids.
    async take(form, post) {
      const files = waiting.get(form) || [];
      const ids = [];
      for (const f of files) {
        const r = await post("/attach", { name: f.name, type: f.type, data: await base64(f) });
        ids.push(r.id);
      }
      waiting.delete(form);
      draw(form);
      return ids;
    },
  };
})();
