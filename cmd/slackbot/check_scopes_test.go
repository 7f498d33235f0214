package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack/emulator"
)

// checkAgainstEmulator runs `slackbot check` against an emulator whose bot
// token has scopes (nil: the emulator's default), and returns its table.
func checkAgainstEmulator(t *testing.T, scopes []string) string {
	t.Helper()
	srv, err := emulator.New(emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	if scopes != nil {
		srv.SetScopes(scopes...)
	}
	model := llmtest.NewServer(t, llmtest.Reply{Text: "ok"})
	cfg := checkConfig(t, model.URL(), testModelKey, slackSection(srv.URL(), srv.BotToken(), srv.AppToken()))
	out, stderr, err := runCheckCLI(t, "--config", cfg)
	if err != nil {
		t.Fatalf("check failed: %v\n%s\n%s", err, out, stderr)
	}
	return out
}

func TestCheckSaysWhenTheBotTokenLacksTheFileScopes(t *testing.T) {
	t.Parallel()
	without := slices.DeleteFunc(slices.Clone(manifestBotScopes), func(s string) bool { return strings.HasPrefix(s, "files:") })
	out := checkAgainstEmulator(t, without)
	status, detail := row(t, out, "slack bot scopes")
	for _, want := range []string{"lacks files:read, files:write", "reinstall", "files people attach are not read", "instead of a file"} {
		if status != checkWarn || !strings.Contains(detail, want) {
			t.Errorf("slack bot scopes: %s %q, want a warning with %q", status, detail, want)
		}
	}
	if status, _ := row(t, out, "slack bot token"); status != checkOK {
		t.Errorf("the token itself works, yet its row is %s", status)
	}
}

func TestCheckFindsEveryManifestScopeOnTheEmulatorsToken(t *testing.T) {
	t.Parallel()
	if status, detail := row(t, checkAgainstEmulator(t, nil), "slack bot scopes"); status != checkOK {
		t.Fatalf("slack bot scopes: %s %q; the emulator's DefaultScopes must hold every scope of the manifest", status, detail)
	}
}
