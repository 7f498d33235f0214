package config

import (
	"strings"
	"testing"
)

func TestInheritEnvIsReadAsAListOfNames(t *testing.T) {
	t.Parallel()
	cfg := mustLoad(t, map[string]string{"slackbot.yaml": baseConfig +
		"mcp_servers:\n  gh:\n    command: gh-mcp\n    inherit_env: [GITHUB_TOKEN, HTTPS_PROXY]\n"})
	got := strings.Join(cfg.MCPServers["gh"].InheritEnv, ",")
	if got != "GITHUB_TOKEN,HTTPS_PROXY" {
		t.Fatalf("inherit_env = %q, want GITHUB_TOKEN,HTTPS_PROXY", got)
	}
}

func TestInheritEnvRefusesWhatIsNotAVariableNameAndHTTPServers(t *testing.T) {
	t.Parallel()
	_, err := loadFiles(t, map[string]string{"slackbot.yaml": baseConfig +
		"mcp_servers:\n  gh:\n    command: gh-mcp\n    inherit_env: [GITHUB_TOKEN, \"A=B\", 1X]\n" +
		"  docs:\n    url: https://mcp.example.com/mcp\n    inherit_env: [HOME]\n"})
	if err == nil {
		t.Fatal("the configuration loaded")
	}
	for _, want := range []string{
		`mcp_servers.gh.inherit_env[1]: "A=B" is not an environment variable name`,
		`mcp_servers.gh.inherit_env[2]: "1X" is not an environment variable name`,
		"mcp_servers.docs.inherit_env: applies to stdio servers only",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "inherit_env[0]") {
		t.Errorf("GITHUB_TOKEN was refused:\n%v", err)
	}
}
