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
// matching one of Allow's globs run without asking. Without Lines (no
// terminal) any other call is denied, saying so.
type TerminalApprover struct {
	// Lines are what the person types, one answer a line (see Lines); nil
	// when there is no terminal.
	Lines <-chan string
	Out   io.Writer
	Allow []string // globs over full tool names ("github__get_*")

	mu       sync.Mutex // one question at a time; guards standing
	standing map[string]bool
}

// Lines reads r's lines into a channel, closed at r's end. The goroutine
// lives as long as r: a terminal's read cannot be interrupted.
func Lines(r io.Reader) <-chan string {
	ch := make(chan string)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return ch
}

// noTerminalReason is what the model is told about a call no one could be
// asked about.
const noTerminalReason = "This call needs a person's approval, there is no terminal to ask on, and --approve does not list it."

// inputEndedReason is what the model is told about a call asked about
// when the terminal's input had ended.
const inputEndedReason = "This call needs a person's approval, and the terminal's input ended before anyone answered."

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
	if t.Lines == nil {
		for i := range out {
			out[i] = Decision{Outcome: OutcomeDenied, At: time.Now(), Reason: noTerminalReason}
		}
		return out
	}
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
		fmt.Fprintf(w, "\n%s wants to call %s (%s %s)", req.Agent, c.Tool, inert(c.Approval.Server), inert(c.Approval.Tool))
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
			case line, ok := <-t.Lines:
				if !ok {
					fmt.Fprintln(w)
					for j := i; j < len(out); j++ {
						out[j] = Decision{Outcome: OutcomeDenied, At: time.Now(), Reason: inputEndedReason}
					}
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
