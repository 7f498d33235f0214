package mcp

import (
	"sort"
	"strings"

	"github.com/slackbot/slackbot/config"
)

// A stdio server gets a minimal environment, not the bot's: the bot's
// own secrets (Slack tokens, model keys, REDIS_URL) reach a server only
// when the operator names them in its env or inherit_env.

// baseEnv are the variables every server inherits: what programs need
// to find their tools, their home, their temporary files and their locale.
var baseEnv = []string{"PATH", "HOME", "LANG", "TZ", "TMPDIR"}

// basePrefixes are the families of variables every server inherits: the
// locale, and how Node and npm (which start most servers) are set up.
var basePrefixes = []string{"LC_", "NODE_", "npm_config_", "NPM_CONFIG_"}

// serverEnv builds the environment of a stdio server from parent (the
// bot's, as os.Environ gives it): the minimal set, the variables cfg
// inherits by name, then cfg's env values, which win.
func serverEnv(parent []string, cfg config.MCPServer) []string {
	named := map[string]bool{}
	for _, k := range baseEnv {
		named[k] = true
	}
	for _, k := range cfg.InheritEnv {
		named[k] = true
	}
	var env []string
	for _, kv := range parent {
		k, _, ok := strings.Cut(kv, "=")
		if _, set := cfg.Env[k]; !ok || set {
			continue
		}
		if named[k] || hasAnyPrefix(k, basePrefixes) {
			env = append(env, kv)
		}
	}
	keys := make([]string, 0, len(cfg.Env))
	for k := range cfg.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+cfg.Env[k].Reveal())
	}
	return env
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
