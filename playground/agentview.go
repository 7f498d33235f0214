package playground

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// The agent view at the page. Opening the bot's DM is opening its
// conversation in Slack's agent view: the page makes the emulator send
// app_home_opened on the Messages tab, the bot sets the suggested prompts
// of the agent the DM routes to, and the page draws them above the
// composer; pressing one sends its message as the person's own, a new
// conversation in the DM, as Slack does. Looking at #general sends
// app_context_changed naming it, so the bot knows where the person was
// when they next write to it; opening the DM names no channel, and so
// leaves that memory as it was.
//
// The prompts are the operator's words, but they reach the page through
// Slack's API like any message and are drawn as plain text, escaped like
// everything else on it.

// look tells the emulator what the person at the page now looks at: the
// DM opens the agent view, #general is the channel in view.
func (p *Playground) look(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Channel string `json:"channel"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	switch req.Channel {
	case p.dm:
		p.srv.OpenAgentView(User)
	case General:
		p.srv.ViewChannel(User, General)
	default:
		http.Error(w, "a view needs a known channel", http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// suggestedPrompts draws the prompts the bot set in its DM, or "" when it
// set none: each title a button, the message it sends shown on hover.
func (p *Playground) suggestedPrompts() string {
	sp, ok := p.srv.SuggestedPrompts(p.dm, "")
	if !ok || len(sp.Prompts) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(`<div class="pg-prompts" data-testid="suggested-prompts">`)
	if sp.Title != "" {
		b.WriteString(`<span class="pg-prompts-title">` + esc(sp.Title) + `</span>`)
	}
	for i, pr := range sp.Prompts {
		b.WriteString(`<button type="button" class="pg-prompt" data-testid="suggested-prompt" data-prompt="` + strconv.Itoa(i) +
			`" data-title="` + esc(pr.Title) + `" title="` + esc(pr.Message) + `">` + esc(pr.Title) + `</button>`)
	}
	b.WriteString(`</div>`)
	return b.String()
}

// prompt presses a suggested prompt of the DM: its message is sent as the
// person's own, verbatim, as Slack sends it. The press names the prompt
// by its place and its title; prompts the bot set anew since the page drew
// them answer 409 and send nothing.
func (p *Playground) prompt(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Index *int   `json:"index"`
		Title string `json:"title"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if req.Index == nil {
		http.Error(w, "a press needs the prompt's index", http.StatusBadRequest)
		return
	}
	sp, ok := p.srv.SuggestedPrompts(p.dm, "")
	if !ok || *req.Index < 0 || *req.Index >= len(sp.Prompts) {
		http.Error(w, "no such suggested prompt", http.StatusNotFound)
		return
	}
	pr := sp.Prompts[*req.Index]
	if pr.Title != req.Title {
		http.Error(w, "the suggested prompts changed: press one again", http.StatusConflict)
		return
	}
	_, ts := p.srv.DM(User, pr.Message)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(sendResponse{TS: ts, Thread: ts})
}
