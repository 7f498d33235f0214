package tools

import (
	"context"
	"fmt"
	"strings"

	"go.uber.org/zap"
)

// catalog is one immutable view of every provider's tools. The orchestrator
// swaps in a new one whenever a provider's list changes, so a call in
// flight keeps the view it started with.
type catalog struct {
	gen     uint64
	entries map[string]*entry // by the name offered to the model
	tools   []Tool            // sorted by name
	// instructions of each provider, with the names of its tools.
	instructions []providerInstructions
}

type providerInstructions struct {
	namespace string
	text      string
	tools     []string
}

type entry struct {
	tool     Tool     // as offered: Name is the model's name
	call     string   // the name the provider listed, which Call receives
	remote   string   // "namespace:tool", for logs
	provider Provider // owner
	schema   *Schema
	queue    *queue // nil: runs at once
}

// build lists every provider's tools into a new catalog. Tools whose
// schema does not compile are left out with a warning; a provider that
// cannot list its tools contributes none until its next change. Names
// taken by an earlier provider get a numeric suffix.
func (o *Orchestrator) build(ctx context.Context, gen uint64) *catalog {
	c := &catalog{gen: gen, entries: map[string]*entry{}}
	schemas := map[string]*Schema{}
	for _, p := range o.providers {
		ns := p.Namespace()
		list, err := p.Tools(ctx)
		if err != nil {
			o.log.Warn("tools unavailable", zap.String("namespace", ns), zap.Error(err))
			continue
		}
		pi := providerInstructions{namespace: ns, text: strings.TrimSpace(p.Instructions())}
		for _, t := range list {
			s, err := o.schema(t.Schema, schemas)
			if err != nil {
				o.log.Warn("tool skipped: its input schema does not compile",
					zap.String("namespace", ns), zap.String("tool", t.Name), zap.Error(err))
				continue
			}
			name := Disambiguate(t.Name, func(n string) bool { _, taken := c.entries[n]; return taken })
			if name != t.Name {
				o.log.Warn("tool renamed: its name is taken by another tool",
					zap.String("namespace", ns), zap.String("tool", t.Name), zap.String("offered_as", name))
			}
			remote := t.Remote
			if remote == "" {
				remote = t.Name
			}
			e := &entry{tool: t, call: t.Name, remote: ns + ":" + remote, provider: p, schema: s}
			e.tool.Name = name
			if t.Queue != "" {
				if e.queue = o.queues[t.Queue]; e.queue == nil {
					o.log.Warn("tool names an unknown queue; its calls run without one",
						zap.String("tool", name), zap.String("queue", t.Queue))
				}
			}
			c.entries[name] = e
			c.tools = append(c.tools, e.tool)
			pi.tools = append(pi.tools, name)
		}
		if pi.text != "" && len(pi.tools) > 0 {
			c.instructions = append(c.instructions, pi)
		}
	}
	sortTools(c.tools)
	o.mu.Lock()
	o.schemas = schemas // keep only the schemas in use
	o.mu.Unlock()
	return c
}

// schema compiles a tool's schema, reusing the compiled form of an
// identical document from the previous catalog: a refresh after one server
// restarts should not recompile a hundred schemas.
func (o *Orchestrator) schema(doc []byte, into map[string]*Schema) (*Schema, error) {
	key := string(doc)
	if s, ok := into[key]; ok {
		return s, nil
	}
	o.mu.Lock()
	s, ok := o.schemas[key]
	o.mu.Unlock()
	if !ok {
		var err error
		if s, err = CompileSchema(doc); err != nil {
			return nil, err
		}
	}
	into[key] = s
	return s, nil
}

// Disambiguate returns name, or when taken reports it is in use, name with
// the first free numeric suffix ("_2", "_3", …), shortened so that the
// whole stays within maxNameLen.
func Disambiguate(name string, taken func(string) bool) string {
	if !taken(name) {
		return name
	}
	for i := 2; ; i++ {
		suffix := fmt.Sprintf("_%d", i)
		base := name
		if len(base)+len(suffix) > maxNameLen {
			base = base[:maxNameLen-len(suffix)]
		}
		if n := base + suffix; !taken(n) {
			return n
		}
	}
}

// Instructions joins the instructions of the providers that offer at least
// one tool for which offered reports true, each under its namespace. It is
// "" when none has any.
func (o *Orchestrator) Instructions(offered func(name string) bool) string {
	var b strings.Builder
	for _, pi := range o.cat.Load().instructions {
		for _, name := range pi.tools {
			if offered == nil || offered(name) {
				if b.Len() > 0 {
					b.WriteString("\n\n")
				}
				fmt.Fprintf(&b, "### %s tools (%s__*)\n%s", pi.namespace, pi.namespace, pi.text)
				break
			}
		}
	}
	return b.String()
}
