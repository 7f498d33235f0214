package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/slackbot/slackbot/config"
)

// appManifest is the part of Slack's app manifest the bot needs: what a
// person pastes into api.slack.com → Create app → From a manifest. Field
// order is the order Slack's own examples use, so the printed manifest
// reads like theirs. Both tags are set because the YAML encoder and
// encoding/json each read their own.
type appManifest struct {
	DisplayInformation manifestDisplay  `json:"display_information" yaml:"display_information"`
	Features           manifestFeatures `json:"features" yaml:"features"`
	OAuthConfig        manifestOAuth    `json:"oauth_config" yaml:"oauth_config"`
	Settings           manifestSettings `json:"settings" yaml:"settings"`
}

type manifestDisplay struct {
	Name        string `json:"name" yaml:"name"`
	Description string `json:"description" yaml:"description"`
}

type manifestFeatures struct {
	AppHome       manifestAppHome        `json:"app_home" yaml:"app_home"`
	BotUser       manifestBotUser        `json:"bot_user" yaml:"bot_user"`
	SlashCommands []manifestSlashCommand `json:"slash_commands,omitempty" yaml:"slash_commands,omitempty"`
	// AgentView puts the bot in Slack's agent view: its own conversations
	// with suggested prompts, and app_context_changed telling which
	// channel the person looks at. New apps cannot take the older
	// assistant_view, and an app that switched cannot switch back.
	AgentView manifestAgentView `json:"agent_view" yaml:"agent_view"`
}

type manifestAppHome struct {
	HomeTabEnabled             bool `json:"home_tab_enabled" yaml:"home_tab_enabled"`
	MessagesTabEnabled         bool `json:"messages_tab_enabled" yaml:"messages_tab_enabled"`
	MessagesTabReadOnlyEnabled bool `json:"messages_tab_read_only_enabled" yaml:"messages_tab_read_only_enabled"`
}

type manifestBotUser struct {
	DisplayName  string `json:"display_name" yaml:"display_name"`
	AlwaysOnline bool   `json:"always_online" yaml:"always_online"`
}

type manifestSlashCommand struct {
	Command      string `json:"command" yaml:"command"`
	Description  string `json:"description" yaml:"description"`
	UsageHint    string `json:"usage_hint" yaml:"usage_hint"`
	ShouldEscape bool   `json:"should_escape" yaml:"should_escape"`
}

type manifestAgentView struct {
	AgentDescription string `json:"agent_description" yaml:"agent_description"`
}

type manifestOAuth struct {
	Scopes manifestScopes `json:"scopes" yaml:"scopes"`
}

type manifestScopes struct {
	Bot []string `json:"bot" yaml:"bot"`
}

type manifestSettings struct {
	EventSubscriptions manifestEvents      `json:"event_subscriptions" yaml:"event_subscriptions"`
	Interactivity      manifestInteractive `json:"interactivity" yaml:"interactivity"`
	OrgDeployEnabled   bool                `json:"org_deploy_enabled" yaml:"org_deploy_enabled"`
	// Socket Mode is why the manifest needs no request URLs: events,
	// commands and button clicks all arrive over the bot's own connection.
	SocketModeEnabled    bool `json:"socket_mode_enabled" yaml:"socket_mode_enabled"`
	TokenRotationEnabled bool `json:"token_rotation_enabled" yaml:"token_rotation_enabled"`
}

type manifestEvents struct {
	BotEvents []string `json:"bot_events" yaml:"bot_events"`
}

type manifestInteractive struct {
	IsEnabled bool `json:"is_enabled" yaml:"is_enabled"`
}

// manifestBotEvents are the events the Socket Mode headend handles:
// mentions, DMs, follow-ups in threads of every kind of conversation, the
// agent view (a new conversation, the channel the person looks at, Slack's
// own Stop on a session), and the channel creations and renames that keep rules by
// channel name current.
var manifestBotEvents = []string{
	"app_mention",
	"message.im",
	"message.channels",
	"message.groups",
	"message.mpim",
	"assistant_thread_started",
	"assistant_thread_context_changed",
	"app_context_changed",
	"agent_session_stopped",
	"app_home_opened",
	"channel_created",
	"channel_rename",
	"group_rename",
}

// manifestBotScopes are the scopes those events and the bot's replies
// need: each message.* event needs the matching :history scope, the
// slash command needs commands, the agent view (its status, suggested
// prompts and titles) needs assistant:write, progress reactions need
// reactions:write, the channel list that resolves rules by name needs the
// :read scope of each kind of channel, reading the files people attach
// needs files:read and answering with a file needs files:write, and
// user-group approvers of tool calls need usergroups:read.
var manifestBotScopes = []string{
	"app_mentions:read",
	"chat:write",
	"im:history",
	"im:read",
	"im:write",
	"channels:history",
	"groups:history",
	"mpim:history",
	"channels:read",
	"groups:read",
	"mpim:read",
	"users:read",
	"usergroups:read",
	"reactions:write",
	"commands",
	"assistant:write",
	"files:read",
	"files:write",
}

// Slack refuses a manifest whose app name is longer than this.
const maxAppNameLen = 35

// newManifest builds the manifest for an app called name answering
// slash (no slash command when slash is empty).
func newManifest(name, slash string) appManifest {
	m := appManifest{
		DisplayInformation: manifestDisplay{
			Name:        name,
			Description: "An LLM agent you can ask questions in Slack.",
		},
		Features: manifestFeatures{
			AppHome:   manifestAppHome{MessagesTabEnabled: true},
			BotUser:   manifestBotUser{DisplayName: name, AlwaysOnline: true},
			AgentView: manifestAgentView{AgentDescription: "Ask " + name + " a question; it answers in the thread, using its tools."},
		},
		OAuthConfig: manifestOAuth{Scopes: manifestScopes{Bot: manifestBotScopes}},
		Settings: manifestSettings{
			EventSubscriptions: manifestEvents{BotEvents: manifestBotEvents},
			Interactivity:      manifestInteractive{IsEnabled: true}, // the Stop button and feedback buttons
			SocketModeEnabled:  true,
		},
	}
	if slash != "" {
		m.Features.SlashCommands = []manifestSlashCommand{{
			Command:     slash,
			Description: "Ask " + name + " a question",
			UsageHint:   "[question]",
		}}
	}
	return m
}

// runManifest prints the Slack app manifest for the configuration's slash
// command. It needs no configuration file: without one it prints the
// defaults, so that creating the Slack app can come first.
func runManifest(args []string, stdout, stderr io.Writer) error {
	flags := flag.NewFlagSet("manifest", flag.ContinueOnError)
	flags.SetOutput(stderr)
	cfgPath := flags.String("config", "slackbot.yaml", "configuration file (optional: without it the defaults are used)")
	name := flags.String("name", "slackbot", "the app's name in Slack")
	format := flags.String("format", "yaml", "output format: yaml or json")
	if err := flags.Parse(args); err != nil || flags.NArg() > 0 {
		if err == nil {
			fmt.Fprintln(stderr, "usage: slackbot manifest [--config FILE] [--name NAME] [--format yaml|json]")
		}
		return errUsage
	}
	if *format != "yaml" && *format != "json" {
		return fmt.Errorf("--format %q is not a manifest format; use yaml or json", *format)
	}
	*name = strings.TrimSpace(*name)
	if *name == "" || len([]rune(*name)) > maxAppNameLen {
		return fmt.Errorf("--name %q: Slack wants an app name of 1 to %d characters", *name, maxAppNameLen)
	}
	configSet := false
	flags.Visit(func(f *flag.Flag) { configSet = configSet || f.Name == "config" })
	slash, err := slashCommandFor(*cfgPath, configSet, stderr)
	if err != nil {
		return err
	}
	m := newManifest(*name, slash)
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(m)
	}
	b, err := yaml.Marshal(m)
	if err != nil {
		return err
	}
	_, err = stdout.Write(b)
	return err
}

// slashCommandFor reads the slash command from the configuration
// file. Without the default file it is the default command; a file named
// with --config must exist. A file that exists but does not load (often
// because the Slack tokens it names are not in the environment yet — they
// come from the app this manifest creates) is read for its slash_command
// alone, with a warning.
func slashCommandFor(path string, named bool, stderr io.Writer) (string, error) {
	cfg, err := config.Load(path)
	if err == nil {
		return cfg.Slack.SlashCommand, nil
	}
	data, rerr := os.ReadFile(path)
	if rerr != nil {
		if !named && errors.Is(rerr, fs.ErrNotExist) {
			return config.DefaultSlashCommand, nil
		}
		return "", err
	}
	var raw struct {
		Slack struct {
			SlashCommand string `yaml:"slash_command"`
		} `yaml:"slack"`
	}
	slash := config.DefaultSlashCommand
	if yaml.Unmarshal(data, &raw) == nil && !strings.Contains(raw.Slack.SlashCommand, "${") {
		switch c := strings.TrimSpace(raw.Slack.SlashCommand); c {
		case "":
		case "off":
			slash = ""
		default:
			slash = c
		}
	}
	fmt.Fprintf(stderr, "slackbot manifest: %s does not load, so only its slash command is used (%q):\n%v\n", path, slash, err)
	return slash, nil
}
