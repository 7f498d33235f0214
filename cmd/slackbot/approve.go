package main

import (
	"flag"
	"io"
	"os"
	"strings"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/state"
)

// globs is a flag that takes comma-separated globs and may be repeated.
type globs []string

func (g *globs) String() string { return strings.Join(*g, ",") }

func (g *globs) Set(v string) error {
	for p := range strings.SplitSeq(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*g = append(*g, p)
		}
	}
	return nil
}

// approveFlag registers --approve: the tools approved for the run.
func approveFlag(fs *flag.FlagSet) *globs {
	g := &globs{}
	fs.Var(g, "approve", "tool globs approved for this run without asking (github__create_*,rest__*); repeatable")
	return g
}

// interactive reports whether a person can answer on in: a terminal, or a
// reader a caller hands over (not a file or pipe the command was given).
// Only then is a call's approval or a tool's question (an MCP
// elicitation) asked there, and only then does the MCP client declare that
// it can ask.
func interactive(in io.Reader) bool {
	f, ok := in.(*os.File)
	if !ok {
		return in != nil
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// terminalApprover asks on the terminal when there is one (reading
// answers from lines), else denies what --approve does not list.
func terminalApprover(in io.Reader, lines <-chan string, out io.Writer, allow globs) *agent.TerminalApprover {
	t := &agent.TerminalApprover{Out: out, Allow: allow}
	if interactive(in) {
		t.Lines = lines
	}
	return t
}

// approvalSummary is a session's approval decisions in a few words:
// "delete_note approved by U1 (thread); add_note denied by U1", "-" for
// none.
func approvalSummary(list []state.Approval) string {
	if len(list) == 0 {
		return "-"
	}
	parts := make([]string, len(list))
	for i, a := range list {
		p := a.Tool + " " + a.Decision
		if a.By != "" {
			p += " by " + a.By
		}
		if a.Thread {
			p += " (thread)"
		}
		parts[i] = p
	}
	return strings.Join(parts, "; ")
}
