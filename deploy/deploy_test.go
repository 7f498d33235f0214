// Package deploy_test keeps the files that install slackbot — the example
// configurations, the compose file, the systemd unit and the Dockerfile —
// loadable and consistent with one another. Each configuration is loaded
// by the bot's own loader, laid out as it is installed: the file, and the
// agents directory beside it.
package deploy_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/slackbot/slackbot/config"
)

// shipped are the configurations the repository ships, and what the
// deployment that uses each expects of its state section.
var shipped = []struct {
	file    string
	backend string // state.backend
}{
	{"../slackbot.example.yaml", "sqlite"},
	{"slackbot.yaml", "sqlite"},      // the image and the systemd unit
	{"slackbot-redis.yaml", "redis"}, // the replicas of compose.yaml
}

// env is what the deployments put in the environment, with placeholder
// values; enabled turns on the optional MCP server too.
func env(enabled bool) func(string) (string, bool) {
	vars := map[string]string{
		"SLACK_BOT_TOKEN": "xoxb-test", "SLACK_APP_TOKEN": "xapp-test",
		"OPENAI_API_KEY": "sk-test", "REDIS_URL": "redis://redis:6379/0",
	}
	if enabled {
		vars["GITHUB_MCP"], vars["GITHUB_TOKEN"] = "true", "ghp-test"
	}
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

// install copies the configuration file into a fresh directory as
// slackbot.yaml, with the repository's agents beside it, as /etc/slackbot
// holds them, and returns the file's path.
func install(t *testing.T, file string) string {
	t.Helper()
	dir := t.TempDir()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "slackbot.yaml"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	agents, err := filepath.Glob("../agents/*.md")
	if err != nil || len(agents) == 0 {
		t.Fatalf("no agents in ../agents (%v)", err)
	}
	if err := os.Mkdir(filepath.Join(dir, "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, a := range agents {
		body, err := os.ReadFile(a)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "agents", filepath.Base(a)), body, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "slackbot.yaml")
}

func load(t *testing.T, file string, enabled bool) *config.Config {
	t.Helper()
	cfg, err := config.LoadWith(install(t, file), config.Options{LookupEnv: env(enabled)})
	if err != nil {
		t.Fatalf("%s does not load:\n%v", file, err)
	}
	return cfg
}

func TestEveryShippedConfigurationLoads(t *testing.T) {
	t.Parallel()
	found, err := filepath.Glob("slackbot*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, s := range shipped {
		listed[s.file] = true
	}
	for _, f := range found {
		if !listed[f] {
			t.Errorf("deploy/%s is not in this test's list: add it with the state backend its deployment expects", f)
		}
	}
	for _, s := range shipped {
		for _, enabled := range []bool{false, true} {
			cfg := load(t, s.file, enabled)
			if cfg.State.Backend != s.backend {
				t.Errorf("%s: state.backend %q, want %q", s.file, cfg.State.Backend, s.backend)
			}
			if cfg.Slack.BotToken.Reveal() != "xoxb-test" || cfg.Slack.AppToken.Reveal() != "xapp-test" {
				t.Errorf("%s: the Slack tokens are not read from the environment", s.file)
			}
			if cfg.Agents[cfg.Slack.Agent] == nil {
				t.Errorf("%s: slack.agent %q is not among the shipped agents", s.file, cfg.Slack.Agent)
			}
			for name, m := range cfg.MCPServers {
				on := m.Enabled == nil || *m.Enabled
				if on != enabled {
					t.Errorf("%s: MCP server %s enabled = %v with GITHUB_MCP=%v", s.file, name, on, enabled)
				}
			}
		}
	}
}

func TestTheRedisConfigurationSharesStateThroughTheEnvironment(t *testing.T) {
	t.Parallel()
	cfg := load(t, "slackbot-redis.yaml", false)
	if got := cfg.State.RedisURL.Reveal(); got != "redis://redis:6379/0" {
		t.Errorf("state.redis_url = %q, want REDIS_URL's value", got)
	}
	if cfg.State.RedisPrefix != config.DefaultRedisPrefix {
		t.Errorf("state.redis_prefix = %q without REDIS_PREFIX, want %q", cfg.State.RedisPrefix, config.DefaultRedisPrefix)
	}
	// Without REDIS_URL the replicas must refuse to start, not fall back
	// to a state of their own.
	lookup := env(false)
	_, err := config.LoadWith(install(t, "slackbot-redis.yaml"), config.Options{LookupEnv: func(k string) (string, bool) {
		if k == "REDIS_URL" {
			return "", false
		}
		return lookup(k)
	}})
	if err == nil || !strings.Contains(err.Error(), "REDIS_URL") {
		t.Errorf("loading without REDIS_URL: %v; want an error naming it", err)
	}
}

// unit reads deploy/slackbot.service as key → values (a key may repeat).
func unit(t *testing.T) map[string][]string {
	t.Helper()
	f, err := os.Open("slackbot.service")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "[") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("slackbot.service: %q is not key=value", line)
		}
		out[k] = append(out[k], v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// compose reads deploy/compose.yaml's bot service.
type composeFile struct {
	Services map[string]struct {
		Deploy struct {
			Replicas int `yaml:"replicas"`
		} `yaml:"deploy"`
		EnvFile         string            `yaml:"env_file"`
		Environment     map[string]string `yaml:"environment"`
		Volumes         []string          `yaml:"volumes"`
		StopGracePeriod string            `yaml:"stop_grace_period"`
	} `yaml:"services"`
}

func compose(t *testing.T) composeFile {
	t.Helper()
	data, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	if _, ok := c.Services["slackbot"]; !ok {
		t.Fatal("compose.yaml has no slackbot service")
	}
	return c
}

// stopRoom is what a stop must allow beyond slack.shutdown_grace: the
// interrupted sessions' answers are posted within a minute, and MCP servers
// get 2 s between SIGTERM and SIGKILL.
const stopRoom = time.Minute + 2*time.Second

func TestStopsWaitLongerThanTheBotsGracefulShutdown(t *testing.T) {
	t.Parallel()
	u := unit(t)
	if got := u["KillMode"]; len(got) != 1 || got[0] != "mixed" {
		t.Errorf("KillMode = %v; want mixed, so SIGTERM reaches the bot alone and it stops its MCP servers itself", got)
	}
	stopTimeout, err := time.ParseDuration(strings.Join(u["TimeoutStopSec"], ""))
	if err != nil {
		t.Fatalf("TimeoutStopSec: %v", err)
	}
	grace, err := time.ParseDuration(compose(t).Services["slackbot"].StopGracePeriod)
	if err != nil {
		t.Fatalf("compose stop_grace_period: %v", err)
	}
	for _, s := range shipped[1:] {
		need := load(t, s.file, false).Slack.ShutdownGrace.D() + stopRoom
		if stopTimeout <= need {
			t.Errorf("TimeoutStopSec=%s, but %s needs more than %s to stop", stopTimeout, s.file, need)
		}
		if grace <= need {
			t.Errorf("compose stop_grace_period %s, but %s needs more than %s to stop", grace, s.file, need)
		}
	}
}

func TestTheUnitAndTheImageKeepTheStateWhereTheConfigurationPutsIt(t *testing.T) {
	t.Parallel()
	cfg := load(t, "slackbot.yaml", false)
	u := unit(t)
	stateDir := "/var/lib/" + strings.Join(u["StateDirectory"], "")
	if filepath.Dir(cfg.State.Path) != stateDir {
		t.Errorf("state.path %s is not in the unit's StateDirectory %s", cfg.State.Path, stateDir)
	}
	exec := strings.Fields(strings.Join(u["ExecStart"], ""))
	if len(exec) < 4 || exec[1] != "run" || exec[2] != "--config" {
		t.Fatalf("ExecStart %v; want BINARY run --config FILE", exec)
	}
	dockerfile, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"COPY deploy/slackbot.yaml " + exec[3],               // the unit and the image read one path
		"COPY agents/ " + filepath.Dir(exec[3]) + "/agents/", // agents_dir ./agents beside it
		`VOLUME ["` + stateDir + `"]`,                        // the state outlives the container
		`CMD ["run", "--config", "` + exec[3] + `"]`,         // and runs like the unit
		"RUN make static",                                    // the binary make static checks
		"USER slackbot",                                      // not root
	} {
		if !strings.Contains(string(dockerfile), want) {
			t.Errorf("the Dockerfile has no %q", want)
		}
	}
}

func TestComposeRunsTwoReplicasOnTheRedisConfiguration(t *testing.T) {
	t.Parallel()
	bot := compose(t).Services["slackbot"]
	if bot.Deploy.Replicas < 2 {
		t.Errorf("deploy.replicas = %d, want 2", bot.Deploy.Replicas)
	}
	if _, err := os.Stat(bot.EnvFile + ".example"); err != nil {
		t.Errorf("env_file %s has no example to copy: %v", bot.EnvFile, err)
	}
	if bot.Environment["REDIS_URL"] == "" {
		t.Error("the replicas are not given REDIS_URL")
	}
	mounted := map[string]string{}
	for _, v := range bot.Volumes {
		parts := strings.Split(v, ":")
		if len(parts) != 3 || parts[2] != "ro" {
			t.Errorf("volume %q is not a read-only mount", v)
			continue
		}
		if _, err := os.Stat(parts[0]); err != nil {
			t.Errorf("volume %q mounts a file the repository lacks: %v", v, err)
		}
		mounted[parts[1]] = parts[0]
	}
	if src := mounted["/etc/slackbot/slackbot.yaml"]; src != "./slackbot-redis.yaml" {
		t.Errorf("the replicas' configuration is %q, want ./slackbot-redis.yaml", src)
	}
}
