package playground

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/slackbot/slackbot/slack"
	"github.com/slackbot/slackbot/slack/emulator"
)

// view is everything the page shows for one channel and its open thread,
// drawn: HTML by key ("list:TS", "thread:TS", "status", "agent", "session",
// in the DM "prompts", and the "modal" open for the person, "" when none).
type view map[string]string

// events streams the page's changes as server-sent events: after a
// "reset", a "fragment" for every message drawn differently from the last
// time, a "remove" for every message gone, and the open thread's "status",
// its agent session ("agent") and "session" panel, in the DM the bot's
// suggested "prompts", and the "modal" the bot opened for the person. The stream follows c (a channel) and thread (the
// root of the thread pane, if open).
func (p *Playground) events(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported", http.StatusInternalServerError)
		return
	}
	channel := r.URL.Query().Get("c")
	if channel != p.dm {
		channel = General
	}
	thread := r.URL.Query().Get("thread")
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(event string, data any) error {
		b, _ := json.Marshal(data)
		_, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		return err
	}
	if send("reset", struct{}{}) != nil {
		return
	}
	sent := view{}
	keepAlive := time.NewTicker(15 * time.Second)
	defer keepAlive.Stop()
	for {
		slackChanged, sessionChanged := p.srv.Changed(), p.sessions.Changed()
		now := p.draw(channel, thread)
		for _, k := range order(now) {
			// A key drawn empty is sent too the first time: the page
			// keeps a modal across a reset until told it is gone.
			if old, ok := sent[k]; ok && old == now[k] {
				continue
			}
			if err := p.sendKey(send, k, now[k]); err != nil {
				return
			}
		}
		for k := range sent {
			if _, ok := now[k]; !ok {
				pane, ts := split(k)
				if send("remove", map[string]string{"pane": pane, "ts": ts}) != nil {
					return
				}
			}
		}
		sent = now
		flusher.Flush()
		select {
		case <-r.Context().Done():
			return
		case <-slackChanged:
		case <-sessionChanged:
		case <-keepAlive.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
		}
	}
}

// sendKey sends one drawn piece of the view as its event.
func (p *Playground) sendKey(send func(string, any) error, key, html string) error {
	switch key {
	case "status", "session", "agent", "prompts", "modal":
		return send(key, map[string]string{"html": html})
	}
	pane, ts := split(key)
	return send("fragment", map[string]string{"pane": pane, "ts": ts, "html": html})
}

// draw renders the channel's top-level messages and, when a thread is
// open, its messages, the bot's status in it and its sessions.
func (p *Playground) draw(channel, thread string) view {
	msgs := p.srv.Messages(channel)
	replies := map[string]int{}
	for _, m := range msgs {
		if !m.Deleted && m.ThreadTS != "" && m.ThreadTS != m.TS {
			replies[m.ThreadTS]++
		}
	}
	reactions := map[string][]string{}
	for _, r := range p.srv.Reactions() {
		if r.Channel == channel {
			reactions[r.TS] = append(reactions[r.TS], reactionText(r.Name))
		}
	}
	streams := streamsByTS(p.srv.Streams(channel))
	v := view{}
	for _, m := range msgs {
		if m.Deleted {
			continue
		}
		if m.ThreadTS == "" || m.ThreadTS == m.TS {
			v["list:"+m.TS] = p.fragment(m, streams[m.TS], true, replies[m.TS], reactions[m.TS])
		}
		if thread != "" && (m.TS == thread || m.ThreadTS == thread) {
			v["thread:"+m.TS] = p.fragment(m, streams[m.TS], false, 0, reactions[m.TS])
		}
	}
	for _, e := range p.srv.Ephemerals() {
		if e.Channel != channel || e.User != User || e.TS == "" {
			continue
		}
		switch {
		case e.ThreadTS == "":
			v["list:"+e.TS] = p.ephemeral(e, true)
		case e.ThreadTS == thread:
			v["thread:"+e.TS] = p.ephemeral(e, false)
		}
	}
	if channel == p.dm {
		v["prompts"] = p.suggestedPrompts()
	}
	v["modal"] = p.modal()
	if thread != "" {
		v["status"] = p.status(channel, thread)
		v["agent"] = p.agentSession(channel, thread)
		v["session"] = string(p.sessions.html(slack.Thread{Channel: channel, TS: thread}))
	}
	return v
}

// status is the bot's assistant status in a thread, as Slack shows it
// under the thread ("slackbot is thinking…"), or "" when it has none.
func (p *Playground) status(channel, thread string) string {
	var last *emulator.Status
	for _, s := range p.srv.Statuses() {
		if s.Channel == channel && s.ThreadTS == thread {
			last = &s
		}
	}
	if last == nil || last.Status == "" {
		return ""
	}
	return `<span class="pg-status-name">slackbot</span> ` + esc(last.Status)
}

// order lists a view's keys with messages in time order, so the page
// appends them as they come.
func order(v view) []string {
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// split parts a view's key into the pane and the message's ts.
func split(key string) (pane, ts string) {
	pane, ts, _ = strings.Cut(key, ":")
	return pane, ts
}

// contextWithTimeout bounds a wait of a request for the bot.
func contextWithTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, 10*time.Second)
}
