package mcp

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/tools"
)

// The reference server over each transport, through the orchestrator.
func TestEverythingServerOverEachTransport(t *testing.T) {
	t.Parallel()
	node, script := npmPeer(t, "server-everything")
	cases := []struct {
		name string
		cfg  func(t *testing.T) config.MCPServer
	}{
		{"stdio", func(*testing.T) config.MCPServer { return stdio(node, script, "stdio") }},
		{"streamable HTTP", func(t *testing.T) config.MCPServer {
			return config.MCPServer{Type: "http", URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", startHTTPPeer(t, "streamableHttp"))}
		}},
		{"SSE", func(t *testing.T) config.MCPServer {
			return config.MCPServer{Type: "sse", URL: fmt.Sprintf("http://127.0.0.1:%d/sse", startHTTPPeer(t, "sse"))}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, orch := setup(t, map[string]config.MCPServer{"every": c.cfg(t)}, fastOptions(t, nil), tools.Options{})
			warm(t, orch)

			if got := run(t, orch, "every__echo", `{"message":"hello there"}`); got != "Echo: hello there" {
				t.Errorf("echo = %q", got)
			}
			if got := run(t, orch, "every__get-sum", `{"a":2,"b":40}`); !strings.Contains(got, "42") {
				t.Errorf("get-sum = %q, want 42 in it", got)
			}
			got := run(t, orch, "every__get-structured-content", `{"location":"Chicago"}`)
			if strings.Count(got, `"temperature"`) != 1 {
				t.Errorf("structured content should appear exactly once: %q", got)
			}
			got = run(t, orch, "every__trigger-long-running-operation", `{"duration":0.2,"steps":2}`)
			if !strings.Contains(got, "Long running operation completed") {
				t.Errorf("long-running operation = %q", got)
			}
			got = run(t, orch, "every__get-tiny-image", `{}`)
			if !strings.Contains(got, "[image: image/png, ") || strings.Contains(got, "iVBOR") {
				t.Errorf("image should be described, never inlined: %q", got)
			}
			if ins := orch.Instructions(nil); !strings.Contains(ins, "Everything Server") {
				t.Errorf("instructions missing: %q", tools.Snippet(ins, 200))
			}
		})
	}
}

func TestFilesystemServerListsAndReadsATempDir(t *testing.T) {
	t.Parallel()
	node, script := npmPeer(t, "server-filesystem")
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("line one\nline two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, orch := setup(t, map[string]config.MCPServer{"fs": stdio(node, script, dir)}, fastOptions(t, nil), tools.Options{})
	warm(t, orch)
	got := run(t, orch, "fs__list_directory", fmt.Sprintf(`{"path":%q}`, dir))
	if !strings.Contains(got, "notes.txt") {
		t.Errorf("list_directory = %q", got)
	}
	got = run(t, orch, "fs__read_text_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(dir, "notes.txt")))
	if !strings.Contains(got, "line two") {
		t.Errorf("read_text_file = %q", got)
	}
}
