// The playground's page: it swaps in the HTML the server draws, sent over
// server-sent events, and posts what the person types or clicks. Nothing
// here draws a message; the server does.
(() => {
  "use strict";
  const channel = document.body.dataset.channel;
  // The server answers only requests that carry the token it put in the
  // page: another site can neither read the page nor guess it.
  const token = document.querySelector('meta[name="playground-token"]').content;
  const list = document.querySelector('[data-testid="messages"]');
  const pane = document.querySelector('[data-testid="thread-pane"]');
  const threadList = document.querySelector('[data-testid="thread-messages"]');
  const status = document.querySelector('[data-testid="status"]');
  const agent = document.querySelector('[data-testid="agent"]');
  const panel = document.querySelector('[data-testid="session-panel-body"]');
  const prompts = document.querySelector('[data-testid="prompts"]');
  let thread = "";
  let stream = null;

  // place puts a drawn message in its container, replacing its earlier
  // drawing or inserting it in timestamp order.
  function place(container, ts, html) {
    const tpl = document.createElement("template");
    tpl.innerHTML = html.trim();
    const el = tpl.content.firstElementChild;
    const old = container.querySelector(':scope > [data-ts="' + CSS.escape(ts) + '"]');
    if (old) {
      const json = old.querySelector(".pg-json");
      const shown = json && !json.hidden;
      old.replaceWith(el);
      if (shown) el.querySelector(".pg-json").hidden = false;
      return;
    }
    let next = null;
    for (const c of container.children) {
      if (c.dataset.ts > ts) { next = c; break; }
    }
    container.insertBefore(el, next);
    if (!next) el.scrollIntoView({ block: "end" });
  }

  function connect() {
    if (stream) stream.close();
    let url = "/events?token=" + encodeURIComponent(token) + "&c=" + encodeURIComponent(channel);
    if (thread) url += "&thread=" + encodeURIComponent(thread);
    stream = new EventSource(url);
    stream.addEventListener("reset", () => {
      list.replaceChildren();
      threadList.replaceChildren();
      status.replaceChildren();
      agent.replaceChildren();
      prompts.replaceChildren();
    });
    stream.addEventListener("fragment", (e) => {
      const d = JSON.parse(e.data);
      place(d.pane === "thread" ? threadList : list, d.ts, d.html);
    });
    stream.addEventListener("remove", (e) => {
      const d = JSON.parse(e.data);
      const c = d.pane === "thread" ? threadList : list;
      const el = c.querySelector(':scope > [data-ts="' + CSS.escape(d.ts) + '"]');
      if (el) el.remove();
    });
    stream.addEventListener("status", (e) => { status.innerHTML = JSON.parse(e.data).html; });
    stream.addEventListener("agent", (e) => { agent.innerHTML = JSON.parse(e.data).html; });
    stream.addEventListener("session", (e) => { panel.innerHTML = JSON.parse(e.data).html; });
    stream.addEventListener("prompts", (e) => { prompts.innerHTML = JSON.parse(e.data).html; });
    stream.addEventListener("modal", (e) => window.pgModal.show(JSON.parse(e.data).html, post));
  }

  function openThread(ts) {
    if (!ts) return;
    thread = ts;
    pane.hidden = false;
    pane.dataset.threadTs = ts;
    connect();
  }

  async function post(path, body) {
    const res = await fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Playground-Token": token },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(path + ": " + res.status + " " + (await res.text()));
    return res.status === 204 ? null : res.json();
  }

  function composer(form, threadOf) {
    const box = form.querySelector("textarea");
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const text = box.value.trim();
      const files = window.pgFiles;
      if (!text && !(files && files.pending(form))) return;
      box.value = "";
      try {
        const ids = files ? await files.take(form, post) : [];
        const r = await post("/send", { channel: channel, thread_ts: threadOf(), text: text, files: ids });
        if (r && r.thread && r.thread !== thread) openThread(r.thread);
      } catch (err) {
        box.value = text;
        console.warn(String(err));
      }
    });
    box.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey) {
        e.preventDefault();
        form.requestSubmit();
      }
    });
  }

  composer(document.querySelector('[data-testid="composer-form"]'), () => "");
  composer(document.querySelector('[data-testid="thread-composer-form"]'), () => thread);

  document.addEventListener("click", async (e) => {
    const t = e.target.closest("[data-open-thread],[data-view-json],[data-action-id],[data-close-thread],[data-stop-session],[data-prompt]");
    if (!t) return;
    const msg = t.closest('[data-testid="message"]');
    if (t.hasAttribute("data-open-thread")) {
      openThread(t.dataset.openThread);
    } else if (t.hasAttribute("data-close-thread")) {
      thread = "";
      pane.hidden = true;
      connect();
    } else if (t.hasAttribute("data-stop-session")) {
      // Slack's own Stop on the thread's agent session.
      t.disabled = true;
      try {
        await post("/stop", { channel: channel, thread_ts: thread });
      } catch (err) {
        t.disabled = false;
        console.warn(String(err));
      }
    } else if (t.hasAttribute("data-prompt")) {
      // A suggested prompt: its message goes as the person's own.
      t.disabled = true;
      try {
        const r = await post("/prompt", { index: Number(t.dataset.prompt), title: t.dataset.title });
        if (r && r.thread) openThread(r.thread);
      } catch (err) {
        t.disabled = false;
        console.warn(String(err));
      }
    } else if (t.hasAttribute("data-view-json") && msg) {
      const pre = msg.querySelector(".pg-json");
      if (pre) pre.hidden = !pre.hidden;
    } else if (t.hasAttribute("data-action-id") && msg) {
      e.preventDefault();
      t.disabled = true;
      try {
        await post("/click", {
          channel: msg.dataset.channel, ts: msg.dataset.ts,
          action_id: t.dataset.actionId, value: t.dataset.value || "",
        });
      } catch (err) {
        t.disabled = false;
        console.warn(String(err));
      }
    }
  });

  connect();
  // Tell Slack what the person looks at: the DM opens the bot's agent
  // view (it sets its suggested prompts), a channel is the one in view.
  post("/view", { channel: channel }).catch((err) => console.warn(String(err)));
})();
