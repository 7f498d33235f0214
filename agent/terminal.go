package agent

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"path"
	"strings"
	"sync"
	"time"
)

// TerminalApprover asks the person at a terminal about the calls that need
// approval (slackbot ask and chat): it shows each call and reads y (run
// it), n (do not) or a (run this tool for the rest of the run). Tools
// matching one of Allow's globs run without asking. Without In (no
// terminal) any other call is denied, saying so.
type TerminalApprover struct {
	In    io.Reader
	Out   io.Writer
	Allow []string // globs over full tool names ("github__get_*")

	once  sync.Once
	lines chan string // In's lines, closed at its end

	mu       sync.Mutex // one question at a time; guards standing
	standing map[string]bool
}

// noTerminalReason is what the model is told about a call no one could be
// asked about.
const noTerminalReason = "This call needs a person's approval, there is no terminal to ask on, and --approve does not list it."

// Standing reports whether tool matches Allow or was answered with a.
func (t *TerminalApprover) Standing(_ context.Context, tool string) bool {
	for _, g := range t.Allow {
		if ok, _ := path.Match(g, tool); ok {
			return true
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.standing[tool]
}

// Deciders is nobody by id: the person at the terminal.
func (t *TerminalApprover) Deciders([]string) []string { return nil }

// Approve asks about each call in turn.
func (t *TerminalApprover) Approve(ctx context.Context, req ApprovalRequest) []Decision {
	out := make([]Decision, len(req.Calls))
	if t.In == nil {
		for i := range out {
			out[i] = Decision{Outcome: OutcomeDenied, At: time.Now(), Reason: noTerminalReason}
		}
		return out
	}
	t.once.Do(func() {
		t.lines = make(chan string)
		go func() { // lives as long as In: a terminal's read cannot be interrupted
			defer close(t.lines)
			sc := bufio.NewScanner(t.In)
			for sc.Scan() {
				t.lines <- sc.Text()
			}
		}()
	})
	t.mu.Lock()
	defer t.mu.Unlock()
	w := t.Out
	if w == nil {
		w = io.Discard
	}
	for i, c := range req.Calls {
		if t.standing[c.Tool] {
			out[i] = Decision{Outcome: OutcomeApproved, Thread: true, At: time.Now()}
			continue
		}
		fmt.Fprintf(w, "\n%s wants to call %s (%s %s)", req.Agent, c.Tool, c.Approval.Server, c.Approval.Tool)
		if c.Approval.Summary != "" {
			fmt.Fprintf(w, ": %s", inert(c.Approval.Summary))
		}
		fmt.Fprintf(w, "\n%s\n", ShowArguments(c.Arguments, 500))
		for out[i].Outcome == "" {
			fmt.Fprint(w, "Run it? [y]es, [n]o, [a]lways for this run: ")
			select {
			case <-ctx.Done():
				fmt.Fprintln(w, "\nNo answer in time: not run.")
				return out
			case line, ok := <-t.lines:
				if !ok {
					fmt.Fprintln(w)
					return out
				}
				switch strings.ToLower(strings.TrimSpace(line)) {
				case "y", "yes":
					out[i] = Decision{Outcome: OutcomeApproved, At: time.Now()}
				case "n", "no":
					out[i] = Decision{Outcome: OutcomeDenied, At: time.Now()}
				case "a", "always":
					out[i] = Decision{Outcome: OutcomeApproved, Thread: true, At: time.Now()}
					if t.standing == nil {
						t.standing = map[string]bool{}
					}
					t.standing[c.Tool] = true
				}
			}
		}
	}
	return out
}
