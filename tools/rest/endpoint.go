package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/tools"
)

// endpoint is one callable HTTP operation, from rest_tools or from an
// OpenAPI document: what the model sees (tool) and how its arguments become
// a request.
type endpoint struct {
	tool tools.Tool // Name is the wanted name, before disambiguation
	// service names the endpoint's owner in messages for the model: the
	// rest_tools key or the openapi key, never a host.
	service string
	method  string
	url     string // absolute, with {name} placeholders
	headers map[string]config.Secret

	// params says where each argument of an OpenAPI operation goes; nil for
	// rest_tools, whose arguments follow the method and the body template.
	params  map[string]param
	bodyArg string // the argument holding an OpenAPI request body
	form    bool   // that body is sent form-encoded rather than as JSON

	body    any             // rest_tools body template (nil: none)
	known   map[string]bool // the schema's property names, for the template
	streams *config.RestStreaming

	reach atomic.Int32 // see mayReachInternal
}

// param is where one OpenAPI argument goes.
type param struct {
	in   string // "query" or "header"; path parameters are URL placeholders
	name string // its name on the wire
	// explode sends an array as repeated keys (OpenAPI's default for
	// query parameters); otherwise its items are joined with sep.
	explode bool
	sep     string
	// deep sends an object's fields as name[field]=value (deepObject);
	// other objects are sent as JSON text.
	deep bool
}

// sendsBody reports whether leftover arguments of a rest_tools endpoint go
// in a JSON body rather than the query.
func sendsBody(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
		return true
	}
	return false
}

// request builds the HTTP request for one call.
func (e *endpoint) request(ctx context.Context, args map[string]any) (*http.Request, error) {
	raw, used, err := expandURL(e.url, args)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, &argError{fmt.Sprintf("the arguments do not make a valid address: %v", bareCause(err))}
	}
	query := u.Query()
	added := false
	fixed := templateQueryKeys(e.url)
	var refused []string
	addQuery := func(name string, v any, p param) {
		if v == nil {
			return
		}
		// The operator's query values stand: an argument cannot replace
		// one, nor add a second value beside it.
		if fixed[name] {
			refused = append(refused, name)
			return
		}
		added = true
		if items, ok := v.([]any); ok && p.explode && scalars(items) {
			for _, it := range items {
				query.Add(name, text(it))
			}
			return
		}
		if items, ok := v.([]any); ok && p.sep != "" && scalars(items) {
			parts := make([]string, len(items))
			for i, it := range items {
				parts[i] = text(it)
			}
			query.Set(name, strings.Join(parts, p.sep))
			return
		}
		if obj, ok := v.(map[string]any); ok && p.deep {
			for k, x := range obj {
				if fixed[name+"["+k+"]"] {
					refused = append(refused, name+"["+k+"]")
					continue
				}
				if x != nil {
					query.Set(name+"["+k+"]", text(x))
				}
			}
			return
		}
		query.Set(name, text(v))
	}
	header := http.Header{}
	var body []byte
	var ctype string

	left := make([]string, 0, len(args))
	for name := range args {
		if !used[name] {
			left = append(left, name)
		}
	}
	sort.Strings(left)
	switch {
	case e.params != nil:
		for _, name := range left {
			v := args[name]
			if name == e.bodyArg {
				if body, ctype, err = encodeBody(v, e.form); err != nil {
					return nil, err
				}
				continue
			}
			switch p := e.params[name]; p.in {
			case "query":
				addQuery(p.name, v, p)
			case "header":
				if v == nil {
					continue
				}
				t := text(v)
				if strings.ContainsAny(t, "\r\n\x00") {
					return nil, &argError{fmt.Sprintf("argument %s is sent as a header and cannot hold line breaks", name)}
				}
				header.Set(p.name, t)
			}
		}
	case e.body != nil:
		inBody := map[string]bool{}
		bodyNames(e.body, inBody)
		if body, err = json.Marshal(fillBody(e.body, args, e.known)); err != nil {
			return nil, &argError{fmt.Sprintf("the arguments cannot be sent as JSON: %v", err)}
		}
		ctype = "application/json"
		if !sendsBody(e.method) {
			for _, name := range left {
				if !inBody[name] {
					addQuery(name, args[name], param{})
				}
			}
		}
	case sendsBody(e.method):
		rest := make(map[string]any, len(left))
		for _, name := range left {
			rest[name] = args[name]
		}
		if body, err = json.Marshal(rest); err != nil {
			return nil, &argError{fmt.Sprintf("the arguments cannot be sent as JSON: %v", err)}
		}
		ctype = "application/json"
	default:
		for _, name := range left {
			addQuery(name, args[name], param{})
		}
	}
	if len(refused) > 0 {
		return nil, &argError{fmt.Sprintf("argument %s cannot be given: the tool's address fixes that query parameter", strings.Join(refused, ", "))}
	}
	if added {
		u.RawQuery = query.Encode()
	}

	var rd *bytes.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := newRequest(ctx, e.method, u, rd)
	if err != nil {
		return nil, err
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	req.Header.Set("Accept", "application/json, text/*;q=0.9, */*;q=0.5")
	req.Header.Set("User-Agent", "slackbot")
	// Configured headers come last: the model cannot override them.
	for k, v := range e.headers {
		req.Header.Set(k, v.Reveal())
	}
	return req, nil
}

// templateQueryKeys lists the query keys an address template writes
// itself, with a fixed value or a placeholder.
func templateQueryKeys(tmpl string) map[string]bool {
	_, q, ok := strings.Cut(tmpl, "?")
	if !ok {
		return nil
	}
	q, _, _ = strings.Cut(q, "#")
	keys := map[string]bool{}
	for _, kv := range strings.Split(q, "&") {
		k, _, _ := strings.Cut(kv, "=")
		if name, err := url.QueryUnescape(k); err == nil && name != "" {
			keys[name] = true
		}
	}
	return keys
}

func newRequest(ctx context.Context, method string, u *url.URL, body *bytes.Reader) (*http.Request, error) {
	if body == nil {
		return http.NewRequestWithContext(ctx, method, u.String(), nil)
	}
	return http.NewRequestWithContext(ctx, method, u.String(), body)
}

// encodeBody encodes an OpenAPI request body as JSON or as a form.
func encodeBody(v any, form bool) ([]byte, string, error) {
	if !form {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, "", &argError{fmt.Sprintf("the body cannot be sent as JSON: %v", err)}
		}
		return b, "application/json", nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, "", &argError{"the body must be an object: it is sent as form fields"}
	}
	vals := url.Values{}
	for k, x := range obj {
		if items, ok := x.([]any); ok && scalars(items) {
			for _, it := range items {
				vals.Add(k, text(it))
			}
			continue
		}
		if x != nil {
			vals.Set(k, text(x))
		}
	}
	return []byte(vals.Encode()), "application/x-www-form-urlencoded", nil
}

// scalars reports whether every item is a string, number or boolean.
func scalars(items []any) bool {
	for _, it := range items {
		switch it.(type) {
		case string, json.Number, bool, float64:
		default:
			return false
		}
	}
	return true
}
