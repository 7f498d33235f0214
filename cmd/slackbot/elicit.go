package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/slackbot/slackbot/tools"
	"github.com/slackbot/slackbot/tools/form"
)

// termElicitor asks a tool's questions on the terminal, one at a time:
// each field with its default shown (Enter keeps it), then the answer is
// checked against the schema and the fields with problems asked again.
type termElicitor struct {
	mu   sync.Mutex
	line func(ctx context.Context) (string, bool) // the next line typed; false at the end of input or of ctx
	out  io.Writer
}

// Elicit asks req on the terminal.
func (t *termElicitor) Elicit(ctx context.Context, req tools.ElicitRequest) (tools.ElicitAnswer, error) {
	f, err := form.Parse(req.Schema)
	if err != nil {
		fmt.Fprintf(t.out, "  · %s asked a question that cannot be shown as a form (%v): declined\n", inert(req.Server), err)
		return tools.ElicitAnswer{Action: tools.ElicitDecline, Reason: err.Error()}, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.out, "\n%s asks: %s\n", inert(req.Server), inert(req.Message))
	fmt.Fprint(t.out, "Answer it? [Enter] yes, d: decline, c: cancel: ")
	choice, ok := t.line(ctx)
	if !ok || ctx.Err() != nil {
		return tools.ElicitAnswer{Action: tools.ElicitCancel, Reason: "no answer on the terminal"}, nil
	}
	switch strings.ToLower(strings.TrimSpace(choice)) {
	case "d", "decline", "n", "no":
		return tools.ElicitAnswer{Action: tools.ElicitDecline}, nil
	case "c", "cancel":
		return tools.ElicitAnswer{Action: tools.ElicitCancel}, nil
	}
	in := map[string][]string{}
	ask := f.Fields
	for {
		for _, fd := range ask {
			fmt.Fprint(t.out, prompt(fd))
			s, ok := t.line(ctx)
			if !ok || ctx.Err() != nil {
				return tools.ElicitAnswer{Action: tools.ElicitCancel, Reason: "no answer on the terminal"}, nil
			}
			delete(in, fd.Name)
			if s = strings.TrimSpace(s); s != "" {
				if fd.Kind == form.MultiSelect {
					for _, v := range strings.Split(s, ",") {
						in[fd.Name] = append(in[fd.Name], strings.TrimSpace(v))
					}
				} else {
					in[fd.Name] = []string{s}
				}
			}
		}
		content, problems := f.Answer(in)
		if problems == nil {
			return tools.ElicitAnswer{Action: tools.ElicitAccept, Content: content}, nil
		}
		ask = ask[:0:0]
		for _, fd := range f.Fields {
			if p, bad := problems[fd.Name]; bad {
				fmt.Fprintf(t.out, "  %s: %s\n", inert(fd.Title), p)
				ask = append(ask, fd)
			}
		}
		if len(ask) == 0 {
			fmt.Fprintf(t.out, "  %s\n", problems.Error())
			ask = f.Fields
		}
	}
}

// prompt is the line asking for one field: its title, what it takes, its
// default.
func prompt(fd form.Field) string {
	var b strings.Builder
	b.WriteString("  " + inert(fd.Title))
	var what []string
	switch fd.Kind {
	case form.Boolean:
		what = append(what, "yes/no")
	case form.Integer:
		what = append(what, "whole number")
	case form.Number:
		what = append(what, "number")
	case form.Select, form.MultiSelect:
		var opts []string
		for _, o := range fd.Options {
			if o.Title != o.Value {
				opts = append(opts, inert(o.Value)+" = "+inert(o.Title))
			} else {
				opts = append(opts, inert(o.Value))
			}
		}
		what = append(what, "one of: "+strings.Join(opts, ", "))
		if fd.Kind == form.MultiSelect {
			what[len(what)-1] = "any of, comma-separated: " + strings.Join(opts, ", ")
		}
	}
	if fd.Description != "" {
		what = append(what, inert(fd.Description))
	}
	if !fd.Required {
		what = append(what, "optional")
	}
	if len(what) > 0 {
		b.WriteString(" (" + strings.Join(what, "; ") + ")")
	}
	if fd.Default != nil {
		b.WriteString(" [" + inert(strings.Join(fd.Default, ", ")) + "]")
	}
	b.WriteString(": ")
	return b.String()
}

// inert is a server's words made safe to print on a terminal: control
// characters (escape sequences that could move the cursor, retitle the
// window or hide text) become '?'.
func inert(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return ' '
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '?'
		}
		return r
	}, s)
}

// nextLine reads the next line typed from lines; false once input ended
// or ctx did.
func nextLine(lines <-chan string) func(context.Context) (string, bool) {
	return func(ctx context.Context) (string, bool) {
		select {
		case l, ok := <-lines:
			return l, ok
		case <-ctx.Done():
			return "", false
		}
	}
}
