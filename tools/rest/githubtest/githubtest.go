// Package githubtest gives tests GitHub's own OpenAPI description imported
// as REST tools, the way a user imports it: 1,200-odd operations, enough to
// show what an agent does with more tools than a model accepts. The
// description comes from the npm package @octokit/openapi, which `make
// test` installs into testdata/npm; it is never committed.
package githubtest

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/tools"
	"github.com/slackbot/slackbot/tools/rest"
)

// Service is the key the description is imported under: its tools are
// named rest__github_<operationId>.
const Service = "github"

// Spec returns the path of api.github.com.json, failing the test when the
// package is not installed.
func Spec(tb testing.TB) string {
	tb.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	p := filepath.Join(root, "testdata", "npm", "node_modules", "@octokit", "openapi", "generated", "api.github.com.json")
	if _, err := os.Stat(p); err != nil {
		tb.Fatalf("GitHub's OpenAPI description is missing (%v): run `make test`, which installs @octokit/openapi into testdata/npm", err)
	}
	return p
}

// Provider imports every operation of the description as a tool whose
// calls go to baseURL.
func Provider(tb testing.TB, baseURL string) *rest.Provider {
	tb.Helper()
	p, err := rest.New(nil, map[string]config.OpenAPI{Service: {Spec: Spec(tb), BaseURL: baseURL}}, rest.Options{})
	if err != nil {
		tb.Fatalf("importing GitHub's OpenAPI description: %v", err)
	}
	tb.Cleanup(func() { _ = p.Close() })
	return p
}

// Tools lists the imported operations as the model would see them.
func Tools(tb testing.TB) []tools.Tool {
	tb.Helper()
	ts, err := Provider(tb, "http://127.0.0.1:1").Tools(context.Background())
	if err != nil {
		tb.Fatalf("listing GitHub's operations: %v", err)
	}
	return ts
}
