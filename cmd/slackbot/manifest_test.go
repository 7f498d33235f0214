package main

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/slackbot/slackbot/llm/llmtest"
)

// parsedManifest is the manifest as Slack reads it, for assertions on keys.
type parsedManifest struct {
	DisplayInformation struct {
		Name string `json:"name"`
	} `json:"display_information"`
	Features struct {
		AppHome struct {
			MessagesTabEnabled         bool `json:"messages_tab_enabled"`
			MessagesTabReadOnlyEnabled bool `json:"messages_tab_read_only_enabled"`
		} `json:"app_home"`
		BotUser struct {
			DisplayName  string `json:"display_name"`
			AlwaysOnline bool   `json:"always_online"`
		} `json:"bot_user"`
		SlashCommands []struct {
			Command     string `json:"command"`
			Description string `json:"description"`
			UsageHint   string `json:"usage_hint"`
		} `json:"slash_commands"`
		AgentView *struct {
			AgentDescription string `json:"agent_description"`
		} `json:"agent_view"`
		AssistantView *struct{} `json:"assistant_view"`
	} `json:"features"`
	OAuthConfig struct {
		Scopes struct {
			Bot []string `json:"bot"`
		} `json:"scopes"`
	} `json:"oauth_config"`
	Settings struct {
		EventSubscriptions struct {
			BotEvents []string `json:"bot_events"`
		} `json:"event_subscriptions"`
		Interactivity struct {
			IsEnabled bool `json:"is_enabled"`
		} `json:"interactivity"`
		SocketModeEnabled bool `json:"socket_mode_enabled"`
	} `json:"settings"`
}

// manifestOf runs `slackbot manifest` with args and parses its output in
// the format asked for (YAML unless --format json).
func manifestOf(t *testing.T, args ...string) (parsedManifest, string) {
	t.Helper()
	out, stderr, err := runCLI(append([]string{"manifest"}, args...)...)
	if err != nil {
		t.Fatalf("manifest %v: %v\n%s", args, err, stderr)
	}
	var m parsedManifest
	if slices.Contains(args, "json") {
		err = json.Unmarshal([]byte(out), &m)
	} else {
		err = yaml.Unmarshal([]byte(out), &m) // it reads the json tags too
	}
	if err != nil {
		t.Fatalf("the manifest does not parse: %v\n%s", err, out)
	}
	return m, stderr
}

// manifestConfig writes a configuration file holding body and returns its
// path. The manifest reads nothing but its slack section.
func manifestConfig(t *testing.T, body string) string {
	t.Helper()
	srv := llmtest.NewServer(t)
	return setupAgent(t, srv, "---\nmodels: [fake/m1]\n---\nYou answer.\n", body)
}

func TestManifestIsWhatSlackNeedsForSocketMode(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"yaml", "json"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			// No --config, and no slackbot.yaml here: the defaults.
			m, _ := manifestOf(t, "--format", format)
			if !m.Settings.SocketModeEnabled {
				t.Error("Socket Mode is off")
			}
			if !m.Settings.Interactivity.IsEnabled {
				t.Error("interactivity is off: the Stop button would not work")
			}
			if m.DisplayInformation.Name != "slackbot" || m.Features.BotUser.DisplayName != "slackbot" || !m.Features.BotUser.AlwaysOnline {
				t.Errorf("names: app %q, bot %+v", m.DisplayInformation.Name, m.Features.BotUser)
			}
			if !m.Features.AppHome.MessagesTabEnabled || m.Features.AppHome.MessagesTabReadOnlyEnabled {
				t.Errorf("people cannot DM the bot: %+v", m.Features.AppHome)
			}
			if m.Features.AgentView == nil || m.Features.AgentView.AgentDescription == "" {
				t.Errorf("the agent view is not declared, or has no description: %+v", m.Features.AgentView)
			}
			if m.Features.AssistantView != nil {
				t.Error("the manifest declares assistant_view, which new apps cannot use beside agent_view")
			}
			for _, scope := range []string{"app_mentions:read", "chat:write", "im:history", "im:read", "im:write", "channels:history",
				"groups:history", "mpim:history", "channels:read", "groups:read", "mpim:read", "users:read", "usergroups:read", "reactions:write", "commands", "assistant:write",
				"files:read", "files:write"} {
				if !slices.Contains(m.OAuthConfig.Scopes.Bot, scope) {
					t.Errorf("scope %s is missing: %v", scope, m.OAuthConfig.Scopes.Bot)
				}
			}
			for _, ev := range []string{"app_mention", "message.im", "message.channels", "message.groups", "message.mpim",
				"assistant_thread_started", "assistant_thread_context_changed", "app_context_changed", "agent_session_stopped", "app_home_opened",
				"channel_created", "channel_rename", "group_rename"} {
				if !slices.Contains(m.Settings.EventSubscriptions.BotEvents, ev) {
					t.Errorf("event %s is missing: %v", ev, m.Settings.EventSubscriptions.BotEvents)
				}
			}
			if len(m.Features.SlashCommands) != 1 || m.Features.SlashCommands[0].Command != "/ask" ||
				m.Features.SlashCommands[0].Description == "" || m.Features.SlashCommands[0].UsageHint == "" {
				t.Errorf("slash commands: %+v", m.Features.SlashCommands)
			}
		})
	}
}

func TestManifestFollowsTheConfiguration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		slack   string
		args    []string
		command string // "" = no slash command
		warns   bool
	}{
		{"the configured slash command", "slack:\n  slash_command: /helpme\n", nil, "/helpme", false},
		{"slash_command off leaves it out", "slack:\n  slash_command: \"off\"\n", nil, "", false},
		{"no slack section means /ask", "", nil, "/ask", false},
		{"a file that does not load still gives its slash command",
			"slack:\n  bot_token: ${SLACKBOT_TEST_UNSET_TOKEN}\n  slash_command: /later\n", nil, "/later", true},
		{"--name names the app and the bot", "", []string{"--name", "Acme Helper"}, "/ask", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := manifestConfig(t, tt.slack)
			m, stderr := manifestOf(t, append([]string{"--config", cfg}, tt.args...)...)
			switch {
			case tt.command == "" && len(m.Features.SlashCommands) != 0:
				t.Errorf("slash commands: %+v, want none", m.Features.SlashCommands)
			case tt.command != "" && (len(m.Features.SlashCommands) != 1 || m.Features.SlashCommands[0].Command != tt.command):
				t.Errorf("slash commands: %+v, want %s", m.Features.SlashCommands, tt.command)
			}
			if got := strings.Contains(stderr, "does not load"); got != tt.warns {
				t.Errorf("warning on stderr = %v, want %v: %q", got, tt.warns, stderr)
			}
			if tt.args != nil && (m.DisplayInformation.Name != "Acme Helper" || m.Features.BotUser.DisplayName != "Acme Helper") {
				t.Errorf("names: %q, %q", m.DisplayInformation.Name, m.Features.BotUser.DisplayName)
			}
		})
	}
}

func TestManifestRefusesWhatSlackWouldRefuse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"an unknown format", []string{"--format", "toml"}, "yaml or json"},
		{"a name Slack finds too long", []string{"--name", strings.Repeat("n", 36)}, "1 to 35 characters"},
		{"an empty name", []string{"--name", " "}, "1 to 35 characters"},
		{"a named configuration that is not there", []string{"--config", filepath.Join(t.TempDir(), "missing.yaml")}, "missing.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, _, err := runCLI(append([]string{"manifest"}, tt.args...)...)
			if err == nil || errors.Is(err, errUsage) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one naming %q", err, tt.want)
			}
			if out != "" {
				t.Errorf("a refused manifest was printed: %q", out)
			}
		})
	}
	if _, stderr, err := runCLI("manifest", "extra"); !errors.Is(err, errUsage) || !strings.Contains(stderr, "usage: slackbot manifest") {
		t.Errorf("a stray argument: err = %v, stderr = %q", err, stderr)
	}
}
