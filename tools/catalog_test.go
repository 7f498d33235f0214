package tools

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestTheToolListFollowsItsProviders(t *testing.T) {
	t.Parallel()
	p := &funcProvider{ns: "srv", call: echoArgs, tools: []Tool{{Name: "srv__a", Schema: anyObject}}}
	o := newOrch(t, Options{}, p)
	gen := o.Generation()
	p.setTools(Tool{Name: "srv__a", Schema: anyObject}, Tool{Name: "srv__b", Schema: anyObject})
	if o.Generation() == gen || strings.Join(toolNames(o), ",") != "srv__a,srv__b" {
		t.Fatalf("after a change: generation %d (was %d), tools %v", o.Generation(), gen, toolNames(o))
	}
	if out := o.Execute(context.Background(), "1", "srv__b", `{}`, 0); !out.OK() {
		t.Fatalf("the new tool does not run: %s", out.Content)
	}
	p.setTools() // the server died: its tools are gone
	out := o.Execute(context.Background(), "2", "srv__a", `{}`, 0)
	if out.Failure != FailUnknownTool || len(o.Tools()) != 0 {
		t.Fatalf("a vanished tool still runs: %q, tools %v", out.Failure, toolNames(o))
	}
}

func TestInstructionsComeFromProvidersWithOfferedTools(t *testing.T) {
	t.Parallel()
	gh := &funcProvider{ns: "github", call: echoArgs, instr: "Search before you read files.", tools: []Tool{{Name: "github__search", Schema: anyObject}}}
	quiet := &funcProvider{ns: "quiet", call: echoArgs, tools: []Tool{{Name: "quiet__x", Schema: anyObject}}}
	docs := &funcProvider{ns: "docs", call: echoArgs, instr: "Cite the page.", tools: []Tool{{Name: "docs__get", Schema: anyObject}}}
	o := newOrch(t, Options{}, gh, quiet, docs)
	all := o.Instructions(nil)
	if !strings.Contains(all, "### github tools (github__*)\nSearch before you read files.") || !strings.Contains(all, "Cite the page.") {
		t.Fatalf("combined instructions:\n%s", all)
	}
	only := o.Instructions(func(name string) bool { return name == "docs__get" })
	if strings.Contains(only, "Search before") || !strings.Contains(only, "Cite the page.") {
		t.Fatalf("instructions for an agent offered docs only:\n%s", only)
	}
	if got := o.Instructions(func(string) bool { return false }); got != "" {
		t.Fatalf("no tools offered, yet instructions: %q", got)
	}
}

func TestWarmupReadiesEveryProviderAndReportsFailures(t *testing.T) {
	t.Parallel()
	ok := &funcProvider{ns: "ok", call: echoArgs}
	bad := &funcProvider{ns: "bad", call: echoArgs, warmErr: errors.New("server exited at start")}
	o := newOrch(t, Options{}, ok, bad)
	gen := o.Generation()
	err := o.Warmup(context.Background())
	if err == nil || !strings.Contains(err.Error(), "bad: server exited at start") || strings.Contains(err.Error(), "ok:") {
		t.Fatalf("err = %v", err)
	}
	if !ok.warmedUp.Load() || !bad.warmedUp.Load() || o.Generation() == gen {
		t.Fatal("warm-up did not reach every provider or refresh the list")
	}
}
