package playground

import (
	"encoding/json"
	"net/http"
)

// A thread's agent session is drawn at the top of the thread pane as Slack
// shows it: the agent, the session's title and status, and, while the
// session is processing, Slack's own Stop control. Stop is Slack's, not
// the bot's: pressing it makes the emulator halt the thread's open streams
// and send agent_session_stopped for the person at the page; what follows
// is the bot's to do.

// agentStatus names an agent session's status as the page shows it.
var agentStatus = map[string]string{
	"processing": "Working…",
	"active":     "Active",
	"suspended":  "Waiting for you",
	"closed":     "Closed",
}

// agentSession draws the agent session of a thread, or "" when it has
// none.
func (p *Playground) agentSession(channel, thread string) string {
	a, ok := p.srv.AgentSession(channel, thread)
	if !ok {
		return ""
	}
	words, known := agentStatus[a.Status]
	if !known {
		words = a.Status
	}
	html := `<div class="pg-agent-session" data-testid="agent-session" data-status="` + esc(a.Status) + `">` +
		`<span class="pg-agent-dot"></span><b class="pg-agent-name">slackbot</b>`
	if a.Title != "" {
		html += ` <span class="pg-agent-title" data-testid="agent-title">` + esc(a.Title) + `</span>`
	}
	html += ` <span class="pg-agent-status">` + esc(words) + `</span>`
	if a.Status == "processing" {
		html += ` <button type="button" class="pg-agent-stop" data-testid="agent-stop" data-stop-session title="Stop the agent">Stop</button>`
	}
	return html + `</div>`
}

// stopSession presses Slack's Stop on a thread's agent session, as the
// person at the page. Only a processing session offers it: another answers
// 409 and sends nothing.
func (p *Playground) stopSession(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Channel  string `json:"channel"`
		ThreadTS string `json:"thread_ts"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if req.Channel != General && req.Channel != p.dm {
		http.Error(w, "a stop needs a known channel", http.StatusBadRequest)
		return
	}
	a, ok := p.srv.AgentSession(req.Channel, req.ThreadTS)
	if !ok {
		http.Error(w, "no agent session in that thread", http.StatusNotFound)
		return
	}
	if a.Status != "processing" {
		http.Error(w, "the agent session is not working: nothing to stop", http.StatusConflict)
		return
	}
	p.srv.StopAgentSession(0, req.Channel, req.ThreadTS, User)
	w.WriteHeader(http.StatusNoContent)
}
