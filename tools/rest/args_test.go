package rest

import (
	"strings"
	"testing"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/tools"
)

func TestAGeneratedSchemaRefusesArgumentsItDoesNotName(t *testing.T) {
	t.Parallel()
	srv := newPeer(t, nil)
	h := newHarness(t, map[string]config.RestTool{"item": {URL: srv.URL + "/items/{id}"}},
		map[string]config.OpenAPI{"petstore": {Spec: petstore, BaseURL: srv.URL + "/v1/"}}, Options{})
	for _, c := range []struct{ tool, args string }{
		{"rest__item", `{"id":"7","api_key":"mine"}`},
		{"rest__petstore_getPet", `{"petId":"7","admin":true}`},
	} {
		out := h.exec(c.tool, c.args)
		if out.Failure != tools.FailInvalidArgs {
			t.Errorf("%s(%s): failure %q, want invalid arguments: %s", c.tool, c.args, out.Failure, out.Content)
		}
	}
	if n := srv.count(); n != 0 {
		t.Errorf("the server received %d requests for arguments the tool does not name", n)
	}
}

func TestAnArgumentCannotReplaceTheOperatorsQueryValues(t *testing.T) {
	t.Parallel()
	srv := newPeer(t, nil)
	// The operator's schema leaves room for more arguments; the fixed
	// query values stand anyway.
	h := newHarness(t, map[string]config.RestTool{"search": {
		URL:        srv.URL + "/search?api_key=OPERATOR&scope=read&q={q}",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}},
	}}, nil, Options{})
	for _, args := range []string{
		`{"q":"x","api_key":"MODEL"}`,
		`{"q":"x","scope":"admin"}`,
	} {
		out := h.exec("rest__search", args)
		if !out.IsError || !strings.Contains(out.Content, "fixes that query parameter") {
			t.Errorf("rest__search(%s) = %q, want it refused", args, out.Content)
		}
	}
	if n := srv.count(); n != 0 {
		t.Fatalf("the server received %d requests overriding the operator's query", n)
	}
	h.mustOK("rest__search", `{"q":"x","page":"2"}`)
	if got := srv.last(t).Query; got != "api_key=OPERATOR&page=2&q=x&scope=read" {
		t.Errorf("query = %q: the operator's values and the new key should all be there", got)
	}
}

func TestDotSegmentsAreRefusedAsPathValuesInEveryEncoding(t *testing.T) {
	t.Parallel()
	srv := newPeer(t, nil)
	h := newHarness(t, map[string]config.RestTool{"file": {URL: srv.URL + "/api/v1/users/{user}/files/{name}"}}, nil, Options{})
	for _, v := range []string{
		".", "..", "%2e%2e", "%2E.", ".%2e", "%2e", "%252e%252e", "../admin", "..%2Fadmin", "..%2fadmin",
		"x/../../admin", `..\admin`, "a%2Fb", "a%5Cb", "%252F", "..%252f..",
	} {
		out := h.exec("rest__file", `{"user":"me","name":"`+strings.ReplaceAll(v, `\`, `\\`)+`"}`)
		if !out.IsError || !strings.Contains(out.Content, "part of the address path") {
			t.Errorf("name %q: %q, want it refused", v, out.Content)
		}
		out = h.exec("rest__file", `{"user":"`+strings.ReplaceAll(v, `\`, `\\`)+`","name":"a.txt"}`)
		if !out.IsError {
			t.Errorf("user %q: %q, want it refused", v, out.Content)
		}
	}
	if n := srv.count(); n != 0 {
		t.Fatalf("the server received %d requests with a dot segment: last %+v", n, srv.last(t))
	}
	for _, ok := range []string{"a.txt", "...", ".hidden", "a b/c", "v1..v2"} {
		h.mustOK("rest__file", `{"user":"me","name":"`+ok+`"}`)
	}
}
