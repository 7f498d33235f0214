package main

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/slackbot/slackbot/tools"
)

const tableSchema = `{"type":"object","properties":{
  "guests":{"type":"integer","title":"Guests","minimum":1,"maximum":8,"default":2},
  "table":{"type":"string","title":"Table","oneOf":[{"const":"window","title":"By the window"},{"const":"bar","title":"At the bar"}],"default":"window"},
  "note":{"type":"string","title":"Note"}}}`

// typed is a terminal on which lines are typed in this order.
func typed(lines ...string) (*termElicitor, *strings.Builder) {
	var out strings.Builder
	i := 0
	return &termElicitor{out: &out, line: func(context.Context) (string, bool) {
		if i >= len(lines) {
			return "", false
		}
		i++
		return lines[i-1], true
	}}, &out
}

func TestTheTerminalAsksEachFieldAndEnterKeepsTheDefault(t *testing.T) {
	e, out := typed("", "", "", "")
	ans, err := e.Elicit(context.Background(), tools.ElicitRequest{Server: "booking", Message: "Which table?", Schema: json.RawMessage(tableSchema)})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"guests": int64(2), "table": "window"}
	if ans.Action != tools.ElicitAccept || !reflect.DeepEqual(ans.Content, want) {
		t.Fatalf("answer %+v, want accept %v", ans, want)
	}
	for _, shown := range []string{"booking asks: Which table?", "Guests (whole number; optional) [2]: ", "window = By the window"} {
		if !strings.Contains(out.String(), shown) {
			t.Errorf("the terminal does not show %q:\n%s", shown, out)
		}
	}
}

func TestTheTerminalAsksAgainForAValueTheSchemaRefuses(t *testing.T) {
	e, out := typed("", "12", "bar", "by 8pm", "6")
	ans, _ := e.Elicit(context.Background(), tools.ElicitRequest{Server: "booking", Schema: json.RawMessage(tableSchema)})
	want := map[string]any{"guests": int64(6), "table": "bar", "note": "by 8pm"}
	if ans.Action != tools.ElicitAccept || !reflect.DeepEqual(ans.Content, want) {
		t.Fatalf("answer %+v, want accept %v", ans, want)
	}
	if !strings.Contains(out.String(), "Guests: Enter 8 or less.") {
		t.Fatalf("the problem was not shown:\n%s", out)
	}
}

func TestTheTerminalDeclinesCancelsAndCancelsAtTheEndOfInput(t *testing.T) {
	for _, tt := range []struct {
		lines []string
		want  tools.ElicitAction
	}{
		{[]string{"d"}, tools.ElicitDecline},
		{[]string{"c"}, tools.ElicitCancel},
		{nil, tools.ElicitCancel},
		{[]string{"", "3"}, tools.ElicitCancel},
	} {
		e, _ := typed(tt.lines...)
		ans, _ := e.Elicit(context.Background(), tools.ElicitRequest{Server: "booking", Schema: json.RawMessage(tableSchema)})
		if ans.Action != tt.want || ans.Content != nil {
			t.Errorf("after %q: %+v, want %s", tt.lines, ans, tt.want)
		}
	}
}

func TestAServersEscapeSequencesReachTheTerminalInert(t *testing.T) {
	evil := "\x1b]0;pwned\x07\x1b[2J\rsafe?"
	e, out := typed("d")
	schema := `{"type":"object","properties":{"x":{"type":"string","title":"` + strings.ReplaceAll(evil, "\x1b", `\u001b`) + `"}}}`
	schema = strings.ReplaceAll(strings.ReplaceAll(schema, "\x07", `\u0007`), "\r", `\r`)
	if _, err := e.Elicit(context.Background(), tools.ElicitRequest{Server: "s\x1b[31m", Message: evil, Schema: json.RawMessage(schema)}); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(out.String(), "\x1b\x07\r") {
		t.Fatalf("control characters reached the terminal: %q", out.String())
	}
}

// A question on a terminal where nobody types ends with its call: the
// wait is cancelled, never held for good.
func TestATerminalQuestionNobodyAnswersEndsWithItsCall(t *testing.T) {
	var out strings.Builder
	e := &termElicitor{out: &out, line: nextLine(make(chan string))} // nothing is ever typed
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ans, err := e.Elicit(ctx, tools.ElicitRequest{Server: "booking", Message: "Which table?", Schema: json.RawMessage(tableSchema)})
	if err != nil || ans.Action != tools.ElicitCancel {
		t.Fatalf("answer %+v, %v; want cancel", ans, err)
	}
}
