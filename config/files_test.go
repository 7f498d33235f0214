package config

import (
	"slices"
	"testing"
)

func TestFileLimitsDefaultToTwentyMegabytesTenFilesAndThreeAnswerMessages(t *testing.T) {
	t.Parallel()
	cfg := mustLoad(t, map[string]string{"slackbot.yaml": baseConfig})
	s := cfg.Slack
	if s.Files.MaxBytes != 20<<20 || s.Files.MaxCount != 10 || s.MaxAnswerMessages != 3 {
		t.Fatalf("files.max_bytes %d, files.max_count %d, max_answer_messages %d; want 20 MB, 10 and 3",
			s.Files.MaxBytes, s.Files.MaxCount, s.MaxAnswerMessages)
	}
	if !slices.Equal(s.Files.Hosts, []string{"files.slack.com"}) {
		t.Fatalf("files.hosts = %v, want only files.slack.com", s.Files.Hosts)
	}
}

func TestAnAPIURLElsewhereAddsItsHostToTheFileHosts(t *testing.T) {
	t.Parallel()
	cfg := mustLoad(t, map[string]string{"slackbot.yaml": baseConfig + "slack:\n  api_url: http://127.0.0.1:8080/api/\n"})
	if !slices.Equal(cfg.Slack.Files.Hosts, []string{"files.slack.com", "127.0.0.1"}) {
		t.Fatalf("files.hosts = %v, want files.slack.com and the api_url's host", cfg.Slack.Files.Hosts)
	}
	cfg = mustLoad(t, map[string]string{"slackbot.yaml": baseConfig + "slack:\n  files:\n    hosts: [Files.Example.com]\n    max_bytes: 1000\n    max_count: 2\n  max_answer_messages: 5\n"})
	if s := cfg.Slack; !slices.Equal(s.Files.Hosts, []string{"files.example.com"}) || s.Files.MaxBytes != 1000 || s.Files.MaxCount != 2 || s.MaxAnswerMessages != 5 {
		t.Fatalf("set values not kept: %+v, max_answer_messages %d", s.Files, s.MaxAnswerMessages)
	}
}

func TestBadFileLimitsAreRefusedWithTheKeyAndTheFix(t *testing.T) {
	t.Parallel()
	_, err := loadFiles(t, map[string]string{"slackbot.yaml": baseConfig +
		"slack:\n  files:\n    max_bytes: 0\n    max_count: -1\n    hosts: [\"https://files.slack.com/\"]\n  max_answer_messages: 0\n"})
	wantErrors(t, err, "slack.files.max_bytes", "default 20971520", "slack.files.max_count", "slack.files.hosts[0]",
		"without scheme", "slack.max_answer_messages")
}
