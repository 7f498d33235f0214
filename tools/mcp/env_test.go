package mcp

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/tools"
)

var (
	envServerOnce sync.Once
	envServerErr  error
)

// envServer returns the path of cmd envserver, built on first use.
func envServer(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(binDir, "envserver")
	envServerOnce.Do(func() {
		out, err := exec.Command("go", "build", "-o", bin, "./internal/envserver").CombinedOutput()
		if err != nil {
			envServerErr = fmt.Errorf("go build envserver: %v\n%s", err, out)
		}
	})
	if envServerErr != nil {
		t.Fatal(envServerErr)
	}
	return bin
}

// The bot's own secrets, as a deployment sets them.
var botSecrets = map[string]string{
	"SLACK_BOT_TOKEN":   "xoxb-1-bot-secret",
	"SLACK_APP_TOKEN":   "xapp-1-app-secret",
	"OPENAI_API_KEY":    "sk-openai-secret",
	"ANTHROPIC_API_KEY": "sk-ant-anthropic-secret",
	"REDIS_URL":         "redis://:redis-secret@127.0.0.1:6379/0",
}

// serverEnvOf starts cfg's server and returns the environment its env tool
// reports, as NAME → value.
func serverEnvOf(t *testing.T, cfg config.MCPServer) map[string]string {
	t.Helper()
	_, orch := setup(t, map[string]config.MCPServer{"envs": cfg}, fastOptions(t, nil), tools.Options{})
	warm(t, orch)
	out := run(t, orch, "envs__env", `{}`)
	env := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			env[k] = v
		}
	}
	return env
}

func TestAStdioServerSeesNoneOfTheBotsSecretsUnlessNamed(t *testing.T) {
	bin := envServer(t) // built with the test's own PATH
	for k, v := range botSecrets {
		t.Setenv(k, v)
	}
	t.Setenv("PATH", "/usr/local/bin:/usr/bin:/bin")
	t.Setenv("LANG", "C.UTF-8")
	t.Setenv("LC_TIME", "C")
	t.Setenv("NODE_OPTIONS", "--max-old-space-size=256")
	t.Setenv("npm_config_cache", "/tmp/npm-cache")
	t.Setenv("GITHUB_TOKEN", "ghp_inheritedbyname")
	t.Setenv("UNRELATED_SETTING", "not-for-servers")

	cfg := config.MCPServer{Type: "stdio", Command: bin,
		Env:        map[string]config.Secret{"API_TOKEN": "given-by-env", "OPENAI_API_KEY": "sk-given-on-purpose"},
		InheritEnv: []string{"GITHUB_TOKEN", "NOT_SET_ANYWHERE"}}
	env := serverEnvOf(t, cfg)

	for _, k := range []string{"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "ANTHROPIC_API_KEY", "REDIS_URL", "UNRELATED_SETTING", "NOT_SET_ANYWHERE"} {
		if v, ok := env[k]; ok {
			t.Errorf("the server sees %s=%s", k, v)
		}
	}
	want := map[string]string{
		"PATH":             "/usr/local/bin:/usr/bin:/bin",
		"LANG":             "C.UTF-8",
		"LC_TIME":          "C",
		"NODE_OPTIONS":     "--max-old-space-size=256",
		"npm_config_cache": "/tmp/npm-cache",
		"GITHUB_TOKEN":     "ghp_inheritedbyname",
		"API_TOKEN":        "given-by-env",
		"OPENAI_API_KEY":   "sk-given-on-purpose", // named in env: the operator's choice
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("the server sees %s=%q, want %q", k, env[k], v)
		}
	}
}

func TestAStdioServerGetsABotSecretWhenInheritEnvNamesIt(t *testing.T) {
	for k, v := range botSecrets {
		t.Setenv(k, v)
	}
	cfg := config.MCPServer{Type: "stdio", Command: envServer(t), InheritEnv: []string{"REDIS_URL"}}
	env := serverEnvOf(t, cfg)
	if env["REDIS_URL"] != botSecrets["REDIS_URL"] {
		t.Errorf("REDIS_URL named in inherit_env: the server sees %q", env["REDIS_URL"])
	}
	if _, ok := env["SLACK_BOT_TOKEN"]; ok {
		t.Error("the server sees SLACK_BOT_TOKEN, which it was not given")
	}
}
