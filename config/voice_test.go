package config

import (
	"strings"
	"testing"
)

func TestAnAgentsVoiceDefaultsToNoBroadcastsAndMentionsOfTheThread(t *testing.T) {
	t.Parallel()
	cfg, err := loadFiles(t, map[string]string{"slackbot.yaml": baseConfig, "agents/a.md": okAgent,
		"agents/b.md": "---\ndescription: b\nallow_broadcasts: true\nmentions: all\n---\nPrompt.\n"})
	if err != nil {
		t.Fatal(err)
	}
	if a := cfg.Agents["a"]; a.AllowBroadcasts || a.Mentions != MentionsThread {
		t.Errorf("defaults: allow_broadcasts %v, mentions %q", a.AllowBroadcasts, a.Mentions)
	}
	if b := cfg.Agents["b"]; !b.AllowBroadcasts || b.Mentions != MentionsAll {
		t.Errorf("set: allow_broadcasts %v, mentions %q", b.AllowBroadcasts, b.Mentions)
	}
	if len(cfg.Slack.TrustedHosts) != 0 {
		t.Errorf("trusted hosts by default: %v", cfg.Slack.TrustedHosts)
	}
}

func TestAMentionPolicyOrATrustedHostThatIsNotOneIsRefusedWithTheFix(t *testing.T) {
	t.Parallel()
	_, err := loadFiles(t, map[string]string{
		"slackbot.yaml": baseConfig + "slack:\n  trusted_hosts: [images.example.com, \"*.cdn.example.com\", \"https://x.example\", \"a.*.example\", \"\"]\n",
		"agents/a.md":   "---\ndescription: a\nmentions: everyone\n---\nPrompt.\n",
	})
	if err == nil {
		t.Fatal("loaded")
	}
	for _, want := range []string{
		`agents/a.md:3: mentions: "everyone" is not a mention policy; use one of: thread, none, all (default thread)`,
		`slack.trusted_hosts[2]: "https://x.example" is not a bare host name`,
		`slack.trusted_hosts[3]: "a.*.example" has a wildcard other than a leading *.`,
		`slack.trusted_hosts[4]: "" is empty`,
		"write a host name like images.example.com, or *.example.com for its subdomains",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("want %q in:\n%v", want, err)
		}
	}
	for _, ok := range []string{"trusted_hosts[0]", "trusted_hosts[1]"} {
		if strings.Contains(err.Error(), ok) {
			t.Errorf("a good host is refused: %v", err)
		}
	}
}
