package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// Options change how a configuration is loaded.
type Options struct {
	// LookupEnv resolves ${VAR} references; nil means os.LookupEnv. Loading
	// never changes the process environment.
	LookupEnv func(string) (string, bool)
}

func (o Options) lookup() func(string) (string, bool) {
	if o.LookupEnv != nil {
		return o.LookupEnv
	}
	return os.LookupEnv
}

// Load reads the configuration file at path and the agent files of its
// agents_dir, with ${VAR} resolved from the process environment. See
// LoadWith.
func Load(path string) (*Config, error) { return LoadWith(path, Options{}) }

// LoadWith reads the configuration file at path, expands ${VAR} and
// ${VAR:-default} in its values, applies defaults, loads every agent file
// (*.md) of agents_dir (relative to the file's directory) into Agents and
// validates it all. On failure it returns every problem it found, each an
// *Error naming file, line and key, joined with errors.Join.
//
// Relative paths in the file (agents_dir, tool_output.dir, state.path) are
// resolved against the file's directory, so a configuration means the same
// whatever the working directory.
func LoadWith(path string, o Options) (*Config, error) {
	p := &problems{}
	cfg := &Config{}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	w, ok := decodeYAML(path, data, cfg, o.lookup(), p)
	if !ok {
		return nil, p.err()
	}
	cfg.Path = path
	dir := filepath.Dir(path)
	cfg.applyDefaults(w, dir)
	cfg.validate(w)

	cfg.Agents = map[string]*Agent{}
	names, err := agentFiles(cfg.AgentsDir)
	if err != nil {
		p.add(path, w.line("agents_dir"), "agents_dir", "%v", err)
	}
	walkers := map[string]*walker{}
	for _, name := range names {
		a, aw := loadAgent(filepath.Join(cfg.AgentsDir, name), cfg, o.lookup(), p)
		cfg.Agents[a.Name] = a
		if aw != nil {
			walkers[a.Name] = aw
		}
	}
	checkRefs(cfg.Agents, walkers, true)
	if cfg.Slack.Agent != "" && cfg.Agents[cfg.Slack.Agent] == nil && err == nil {
		w.errorf("slack.agent", "agent %q is not in %s (agents: %s)", cfg.Slack.Agent, cfg.AgentsDir, oneOf(sortedKeys(cfg.Agents)))
	}
	for i, r := range cfg.Slack.Routing.Rules {
		if r.Agent != "" && cfg.Agents[r.Agent] == nil && err == nil {
			w.errorf(fmt.Sprintf("slack.routing.rules[%d].agent", i), "agent %q is not in %s (agents: %s)", r.Agent, cfg.AgentsDir, oneOf(sortedKeys(cfg.Agents)))
		}
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// decodeYAML parses data, prepares the tree with a walker for v's type and
// decodes it into v, reporting problems to p. It reports false when v could
// not be decoded; when it reports true, v may still have had values
// dropped for problems already reported, and its checks should run.
func decodeYAML(file string, data []byte, v any, lookup func(string) (string, bool), p *problems) (*walker, bool) {
	w := newWalker(file, lookup, p)
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		e := yamlError(file, err)
		e.Msg += flowHint(data, e.Line)
		p.list = append(p.list, e)
		return w, false
	}
	if len(f.Docs) > 1 {
		p.add(file, docLine(f.Docs[1]), "", "holds more than one YAML document; remove the extra \"---\"")
		return w, false
	}
	var body ast.Node
	if len(f.Docs) == 1 {
		body = f.Docs[0].Body
	}
	if body == nil || isNull(body) {
		w.checking = true
		return w, true
	}
	body = w.node(body, reflect.TypeOf(v).Elem(), "", false)
	var opts []yaml.DecodeOption
	if len(w.bad) == 0 {
		opts = append(opts, yaml.Strict())
	}
	w.checking = true
	if err := yaml.NodeToValue(body, v, opts...); err != nil {
		p.list = append(p.list, yamlError(file, err))
		return w, false
	}
	return w, true
}

// flowHint explains the syntax error YAML gives for an unquoted ${VAR}
// inside [ ] or { }, where "{" and "}" are structure.
func flowHint(data []byte, line int) string {
	lines := strings.Split(string(data), "\n")
	if line < 1 || line > len(lines) {
		return ""
	}
	l := lines[line-1]
	if i := strings.Index(l, "${"); i > 0 && strings.ContainsAny(l[:i], "[{") {
		return `; inside [ ] or { }, quote a value that uses ${...}, like ["${MODEL}"]`
	}
	return ""
}

func docLine(d *ast.DocumentNode) int {
	if tk := d.GetToken(); tk != nil && tk.Position != nil {
		return tk.Position.Line
	}
	return 0
}

// agentFiles lists the *.md files of dir, sorted. Hidden files (editor
// leftovers) and subdirectories are skipped.
func agentFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("directory %s does not exist; create it with one Markdown file per agent, or point agents_dir at one", dir)
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || strings.HasPrefix(n, ".") || filepath.Ext(n) != ".md" {
			continue
		}
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

// resolve makes a relative path relative to dir.
func resolve(dir, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}
