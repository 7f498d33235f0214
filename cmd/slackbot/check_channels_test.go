package main

import (
	"strings"
	"testing"

	"github.com/slackbot/slackbot/llm/llmtest"
)

func TestCheckWarnsOfEveryChannelRuleThatStillMatchesByName(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Text: "ok"})
	cfg := checkConfig(t, srv.URL(), testModelKey, "slack:\n  agent: helper\n  allow:\n    channels: [C0123ABCD, G0456EFGH]\n"+
		"  routing:\n    deny: [\"#random\", C0999]\n    rules:\n      - channels: [C0OPS]\n        agent: helper\n"+
		"      - channels: [\"ops-*\", C0OPS2]\n        agent: helper\n")
	out, stderr, err := runCheckCLI(t, "--config", cfg)
	if err != nil {
		t.Fatalf("a warning failed the check: %v\n%s\n%s", err, out, stderr)
	}
	if status, detail := row(t, out, "slack.routing.deny"); status != "warn" || !strings.Contains(detail, `"#random"`) || strings.Contains(detail, "C0999") {
		t.Errorf("slack.routing.deny: %s %q", status, detail)
	}
	if status, detail := row(t, out, "slack.routing.rules[1].channels"); status != "warn" || !strings.Contains(detail, `"ops-*"`) || strings.Contains(detail, "C0OPS2") {
		t.Errorf("slack.routing.rules[1].channels: %s %q", status, detail)
	}
	// Rules by id alone are not listed.
	for _, key := range []string{"slack.allow.channels", "slack.routing.rules[0].channels"} {
		if strings.Contains(out, key) {
			t.Errorf("%s matches by id only, yet is listed:\n%s", key, out)
		}
	}
}
