package rest

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/tools"
)

// Namespace is the namespace of every tool of the provider.
const Namespace = "rest"

// streamGrace is how much longer than its stream timeout a streaming tool
// may run, so that the stream's own end — with the partial answer — comes
// before the orchestrator's cut-off, which would lose it.
const streamGrace = 5 * time.Second

// restEndpoint turns one rest_tools entry into an endpoint.
func restEndpoint(name string, t config.RestTool) (*endpoint, error) {
	key := "rest_tools." + name
	method := strings.ToUpper(strings.TrimSpace(t.Method))
	if method == "" {
		method = "GET"
	}
	probe := placeholder.ReplaceAllString(t.URL, "x")
	if u, err := url.Parse(probe); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s.url: must be an absolute http(s) URL", key)
	}
	schema := t.Parameters
	if schema == nil {
		schema = placeholderSchema(placeholders(t.URL))
	}
	doc, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("%s.parameters: cannot be written as JSON Schema: %w", key, err)
	}
	known := map[string]bool{}
	if props, ok := schema["properties"].(map[string]any); ok {
		for k := range props {
			known[k] = true
		}
	}
	desc := strings.TrimSpace(t.Description)
	if desc == "" {
		desc = fmt.Sprintf("Calls the %s endpoint (%s).", name, method)
	}
	timeout := t.Timeout.D()
	if st := t.Streaming; st != nil && st.Timeout > 0 && timeout < st.Timeout.D()+streamGrace {
		timeout = st.Timeout.D() + streamGrace
	}
	return &endpoint{
		tool: tools.Tool{
			Name:        tools.Name(Namespace, name),
			Description: desc,
			Schema:      doc,
			Queue:       t.Queue,
			Remote:      name,
			Timeout:     timeout,
			CacheTTL:    t.Cache.D(),
			Approval:    tools.NewApproval(t.ApprovalMode(), tools.WritingMethod(method), Namespace, name, desc, t.ApproversOrAsker()),
		},
		service: name,
		method:  method,
		url:     t.URL,
		headers: t.Headers,
		body:    t.Body,
		known:   known,
		streams: t.Streaming,
	}, nil
}

// placeholderSchema is the schema of an endpoint configured without one:
// each URL placeholder as a required string, and nothing else.
func placeholderSchema(names []string) map[string]any {
	props := map[string]any{}
	required := []any{}
	for _, n := range names {
		props[n] = map[string]any{"type": "string"}
		required = append(required, n)
	}
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}
