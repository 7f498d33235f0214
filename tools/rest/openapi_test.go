package rest

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/tools"
)

const petstore = "testdata/petstore.yaml"

func toolNames(ts []tools.Tool) []string {
	var names []string
	for _, t := range ts {
		names = append(names, t.Name)
	}
	return names
}

func TestOpenAPIFilters(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  config.OpenAPI
		want []string
	}{
		{name: "no filter imports every operation, naming one without operationId by method and path",
			want: []string{"rest__petstore_createPet", "rest__petstore_deletePet", "rest__petstore_getPet",
				"rest__petstore_get_stores_storeId_inventory", "rest__petstore_listPets"}},
		{name: "tags keep operations with one of them", cfg: config.OpenAPI{Tags: []string{"admin", "store"}},
			want: []string{"rest__petstore_deletePet", "rest__petstore_get_stores_storeId_inventory"}},
		{name: "methods keep operations of those methods, in any case", cfg: config.OpenAPI{Methods: []string{"post", "DELETE"}},
			want: []string{"rest__petstore_createPet", "rest__petstore_deletePet"}},
		{name: "operation globs match operationIds and made-up names", cfg: config.OpenAPI{Operations: []string{"get*"}},
			want: []string{"rest__petstore_getPet", "rest__petstore_get_stores_storeId_inventory"}},
		{name: "filters combine", cfg: config.OpenAPI{Tags: []string{"pets"}, Methods: []string{"GET"}},
			want: []string{"rest__petstore_getPet", "rest__petstore_listPets"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.cfg.Spec = petstore
			h := newHarness(t, nil, map[string]config.OpenAPI{"petstore": tc.cfg}, Options{})
			if got := toolNames(h.o.Tools()); !slices.Equal(got, tc.want) {
				t.Errorf("tools = %v\nwant    %v", got, tc.want)
			}
		})
	}
}

func TestOpenAPIOperationsThroughTheOrchestrator(t *testing.T) {
	t.Parallel()
	srv := newPeer(t, nil)
	h := newHarness(t, nil, map[string]config.OpenAPI{"petstore": {
		Spec:    petstore,
		BaseURL: srv.URL + "/v1/",
		Headers: map[string]config.Secret{"Authorization": "Bearer pet-token"},
		Timeout: config.Duration(time.Minute),
		Cache:   config.Duration(time.Minute),
	}}, Options{})

	list, _ := h.o.Tool("rest__petstore_listPets")
	if list.Description != "List pets\n\nLists the pets of the store, a page at a time." || list.Remote != "listPets" ||
		list.Timeout != time.Minute || list.CacheTTL != time.Minute {
		t.Errorf("listPets = %+v", list)
	}
	if create, _ := h.o.Tool("rest__petstore_createPet"); create.CacheTTL != 0 {
		t.Errorf("a POST is cached for %s", create.CacheTTL)
	}

	calls := []struct {
		name      string
		tool      string
		args      string
		method    string
		path      string
		query     string
		body      string
		header    [2]string
		wantError tools.Failure
	}{
		{name: "query parameters, an exploded array and a header parameter from a $ref",
			tool: "rest__petstore_listPets", args: `{"limit":5,"tag":["a b","c"],"X-Trace":"t-1"}`,
			method: "GET", path: "/v1/pets", query: "limit=5&tag=a+b&tag=c", header: [2]string{"X-Trace", "t-1"}},
		{name: "a path parameter declared on the path item is escaped",
			tool: "rest__petstore_getPet", args: `{"petId":"a/b c"}`, method: "GET", path: "/v1/pets/a%2Fb%20c"},
		{name: "an operation without operationId",
			tool: "rest__petstore_get_stores_storeId_inventory", args: `{"storeId":3}`, method: "GET", path: "/v1/stores/3/inventory"},
		{name: "the request body goes under body, with $refs (even recursive) resolved",
			tool: "rest__petstore_createPet", args: `{"body":{"name":"Rex","tag":null,"owner":{"name":"Ann","pets":[{"name":"Tom"}]}}}`,
			method: "POST", path: "/v1/pets", body: `{"name":"Rex","tag":null,"owner":{"name":"Ann","pets":[{"name":"Tom"}]}}`},
		{name: "DELETE", tool: "rest__petstore_deletePet", args: `{"petId":"7"}`, method: "DELETE", path: "/v1/pets/7"},
		{name: "a number out of the parameter's bounds is refused before sending",
			tool: "rest__petstore_listPets", args: `{"limit":0}`, wantError: tools.FailInvalidArgs},
		{name: "a required body is required", tool: "rest__petstore_createPet", args: `{}`, wantError: tools.FailInvalidArgs},
		{name: "the body's schema comes from the $ref", tool: "rest__petstore_createPet", args: `{"body":{"tag":"x"}}`,
			wantError: tools.FailInvalidArgs},
		{name: "a path parameter is required", tool: "rest__petstore_getPet", args: `{}`, wantError: tools.FailInvalidArgs},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			before := srv.count()
			out := h.exec(c.tool, c.args)
			if c.wantError != "" {
				if out.Failure != c.wantError {
					t.Fatalf("failure %q, want %q: %s", out.Failure, c.wantError, out.Content)
				}
				if srv.count() != before {
					t.Error("a request was sent for invalid arguments")
				}
				return
			}
			if !out.OK() {
				t.Fatalf("failed (%s): %s", out.Failure, out.Content)
			}
			r := srv.last(t)
			if r.Method != c.method || r.Path != c.path || r.Query != c.query {
				t.Errorf("request = %s %s?%s, want %s %s?%s", r.Method, r.Path, r.Query, c.method, c.path, c.query)
			}
			if got := r.Header.Get("Authorization"); got != "Bearer pet-token" {
				t.Errorf("Authorization = %q", got)
			}
			if c.header[0] != "" && r.Header.Get(c.header[0]) != c.header[1] {
				t.Errorf("%s = %q, want %q", c.header[0], r.Header.Get(c.header[0]), c.header[1])
			}
			if c.body != "" {
				assertSameJSON(t, r.Body, c.body)
			} else if r.Body != "" {
				t.Errorf("body = %q, want none", r.Body)
			}
		})
	}
}

func TestOpenAPIDocumentErrorsNameTheKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	relative := filepath.Join(dir, "relative.yaml")
	doc, err := os.ReadFile(petstore)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(relative, []byte(strings.Replace(string(doc), "https://pets.example.invalid/v1", "/v1", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		spec string
		want []string
	}{
		{"a missing file", "testdata/nope.yaml", []string{"openapi.petstore: spec testdata/nope.yaml: cannot be read"}},
		{"a file that is not YAML", "testdata/broken.yaml", []string{"openapi.petstore: spec testdata/broken.yaml: not a valid OpenAPI document"}},
		{"a Swagger 2.0 document", "testdata/swagger2.yaml", []string{"openapi.petstore: spec testdata/swagger2.yaml: not an OpenAPI 3 document"}},
		{"a file whose server is relative", relative, []string{"openapi.petstore: base_url:", "relative"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := New(nil, map[string]config.OpenAPI{"petstore": {Spec: tc.spec}}, Options{})
			if err == nil {
				t.Fatal("New accepted the document")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestOpenAPIDocumentByURLArrivesInWarmup(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(petstore)
	if err != nil {
		t.Fatal(err)
	}
	relative := strings.Replace(string(doc), "https://pets.example.invalid/v1", "/v1", 1)
	var ready atomic.Bool
	srv := newPeer(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/specs/petstore.yaml" && ready.Load():
			w.Header().Set("Content-Type", "application/yaml")
			w.Write([]byte(relative))
		case r.URL.Path == "/specs/petstore.yaml":
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			w.Write([]byte(`[]`))
		}
	})
	h := newHarness(t, nil, map[string]config.OpenAPI{"petstore": {Spec: srv.URL + "/specs/petstore.yaml", Methods: []string{"GET"}}}, Options{})
	if n := len(h.o.Tools()); n != 0 {
		t.Fatalf("%d tools before the document was fetched", n)
	}

	// The first fetch fails: Warmup says so, and the provider keeps trying.
	changed := make(chan struct{})
	h.p.mu.Lock()
	refresh := h.p.onChange
	h.p.onChange = func() { refresh(); close(changed) }
	h.p.retry = time.Millisecond
	h.p.mu.Unlock()
	err = h.o.Warmup(context.Background())
	if err == nil || !strings.Contains(err.Error(), "HTTP 503") {
		t.Fatalf("Warmup error = %v", err)
	}
	if n := len(h.o.Tools()); n != 0 {
		t.Fatalf("%d tools after a failed fetch", n)
	}
	ready.Store(true)
	<-changed

	want := []string{"rest__petstore_getPet", "rest__petstore_get_stores_storeId_inventory", "rest__petstore_listPets"}
	if got := toolNames(h.o.Tools()); !slices.Equal(got, want) {
		t.Fatalf("tools = %v, want %v", got, want)
	}
	h.mustOK("rest__petstore_listPets", `{"limit":1}`)
	if r := srv.last(t); r.Path != "/v1/pets" || r.Query != "limit=1" {
		t.Errorf("request went to %s?%s; the relative server should resolve against the document's URL", r.Path, r.Query)
	}
	if err := h.o.Warmup(context.Background()); err != nil {
		t.Errorf("Warmup once loaded: %v", err)
	}
}

func TestSchemaConversion(t *testing.T) {
	t.Parallel()
	p, err := New(nil, map[string]config.OpenAPI{"petstore": {Spec: petstore}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := p.Tools(context.Background())
	var create string
	for _, tl := range ts {
		if tl.Name == "rest__petstore_createPet" {
			create = string(tl.Schema)
		}
		if _, err := tools.CompileSchema(tl.Schema); err != nil {
			t.Errorf("%s: %v", tl.Name, err)
		}
		if strings.Contains(string(tl.Schema), "$ref") {
			t.Errorf("%s keeps a $ref: %s", tl.Name, tl.Schema)
		}
	}
	for _, w := range []string{`"type":["string","null"]`, `"required":["body"]`} {
		if !strings.Contains(create, w) {
			t.Errorf("createPet schema lacks %s: %s", w, create)
		}
	}
}

func TestOpenAPIParameterStylesAndFormBodies(t *testing.T) {
	t.Parallel()
	srv := newPeer(t, nil)
	h := newHarness(t, nil, map[string]config.OpenAPI{"styles": {Spec: "testdata/styles.json", BaseURL: srv.URL}}, Options{})
	// upload needs a binary body, which a model cannot give: it is left out.
	want := []string{"rest__styles_search_items", "rest__styles_submit"}
	if got := toolNames(h.o.Tools()); !slices.Equal(got, want) {
		t.Fatalf("tools = %v, want %v", got, want)
	}
	tests := []struct {
		name, tool, args, query, body string
	}{
		{name: "unexploded, pipe-delimited and deepObject query parameters; a parameter named body keeps its name",
			tool: "rest__styles_search_items", args: `{"ids":[1,2],"words":["a","b"],"filter":{"k":"v"},"body":"q"}`,
			query: "body=q&filter%5Bk%5D=v&ids=1%2C2&words=a%7Cb"},
		{name: "a form body beside a parameter named body", tool: "rest__styles_submit",
			args: `{"body":"q","body_2":{"name":"x y","tags":["a","b"]}}`, query: "body=q", body: "name=x+y&tags=a&tags=b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h.mustOK(tc.tool, tc.args)
			r := srv.last(t)
			if r.Query != tc.query || r.Body != tc.body {
				t.Errorf("request ?%s body %q, want ?%s body %q", r.Query, r.Body, tc.query, tc.body)
			}
			if tc.body != "" && r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
				t.Errorf("Content-Type = %q", r.Header.Get("Content-Type"))
			}
		})
	}
}

func TestServerVariablesTakeTheirDefaults(t *testing.T) {
	t.Parallel()
	p, err := New(nil, map[string]config.OpenAPI{"styles": {Spec: "testdata/styles.json"}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := p.set.Load().byName["rest__styles_submit"]
	if e == nil || e.url != "https://eu.example.invalid/api/search" {
		t.Fatalf("endpoint = %+v", e)
	}
}

func TestNamesStayUniqueAcrossRestToolsAndDocuments(t *testing.T) {
	t.Parallel()
	p, err := New(map[string]config.RestTool{"styles_submit": {URL: "https://x.invalid/"}},
		map[string]config.OpenAPI{"styles": {Spec: "testdata/styles.json"}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := p.Tools(context.Background())
	want := []string{"rest__styles_submit", "rest__styles_search_items", "rest__styles_submit_2"}
	if got := toolNames(ts); !slices.Equal(got, want) {
		t.Errorf("tools = %v, want %v", got, want)
	}
}

func TestHeaderArgumentWithLineBreakIsRefused(t *testing.T) {
	t.Parallel()
	srv := newPeer(t, nil)
	h := newHarness(t, nil, map[string]config.OpenAPI{"petstore": {Spec: petstore, BaseURL: srv.URL}}, Options{})
	out := h.exec("rest__petstore_listPets", `{"X-Trace":"a\r\nX-Evil: 1"}`)
	if !out.IsError || !strings.Contains(out.Content, "X-Trace") || srv.count() != 0 {
		t.Errorf("outcome %+v, %d requests sent", out, srv.count())
	}
}
