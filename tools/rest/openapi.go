package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"go.uber.org/zap"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/tools"
)

// maxDocBytes bounds an OpenAPI document fetched from a URL; the largest
// public API descriptions are a few tens of megabytes.
const maxDocBytes = 64 << 20

// maxDescription bounds a tool's description: it is sent with every turn.
const maxDescription = 1500

// methods are the HTTP methods imported, in the order an operation's
// tools are listed.
var methods = []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}

func isURL(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// loadFile reads an OpenAPI document from a file and imports it.
func loadFile(key string, cfg config.OpenAPI, log *zap.Logger) ([]*endpoint, error) {
	data, err := os.ReadFile(cfg.Spec)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("openapi.%s: spec %s: cannot be read: %w", key, cfg.Spec, err)
	}
	return importDoc(context.Background(), key, cfg, data, &url.URL{Path: cfg.Spec}, log)
}

// fetchDoc downloads an OpenAPI document and imports it.
func fetchDoc(ctx context.Context, c *http.Client, key string, cfg config.OpenAPI, log *zap.Logger) ([]*endpoint, error) {
	loc, err := url.Parse(cfg.Spec)
	if err != nil {
		return nil, fmt.Errorf("openapi.%s: spec: not a valid URL", key)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Spec, nil)
	if err != nil {
		return nil, fmt.Errorf("openapi.%s: spec %s: %w", key, logURL(loc), err)
	}
	req.Header.Set("Accept", "application/json, application/yaml;q=0.9, */*;q=0.5")
	req.Header.Set("User-Agent", "slackbot")
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("openapi.%s: spec %s: %w", key, logURL(loc), bareCause(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("openapi.%s: spec %s: %s", key, logURL(loc), status(resp.StatusCode))
	}
	data, cut, err := readBounded(resp.Body, maxDocBytes)
	if err != nil {
		return nil, fmt.Errorf("openapi.%s: spec %s: %w", key, logURL(loc), bareCause(err))
	}
	if cut {
		return nil, fmt.Errorf("openapi.%s: spec %s: larger than %d bytes", key, logURL(loc), maxDocBytes)
	}
	return importDoc(ctx, key, cfg, data, loc, log)
}

// importDoc parses a document, resolving its local $refs, and makes one
// endpoint per operation the filters let through. Problems the validator
// finds are logged rather than fatal: public documents often break a rule
// or two while describing their operations well enough to call them.
func importDoc(ctx context.Context, key string, cfg config.OpenAPI, data []byte, loc *url.URL, log *zap.Logger) ([]*endpoint, error) {
	where := fmt.Sprintf("openapi.%s: spec %s", key, cfg.Spec)
	if isURL(cfg.Spec) {
		where = fmt.Sprintf("openapi.%s: spec %s", key, logURL(loc))
	}
	l := openapi3.NewLoader()
	l.Context = ctx
	l.IsExternalRefsAllowed = false // a document must not make us read other files or hosts
	doc, err := l.LoadFromDataWithPath(data, loc)
	if err != nil {
		return nil, fmt.Errorf("%s: not a valid OpenAPI document: %w", where, err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		return nil, fmt.Errorf("%s: not an OpenAPI 3 document (openapi: %q); Swagger 2.0 documents must be converted first", where, doc.OpenAPI)
	}
	if err := doc.Validate(ctx, openapi3.DisableExamplesValidation(), openapi3.DisableSchemaDefaultsValidation(),
		openapi3.DisableSchemaPatternValidation()); err != nil {
		log.Warn("openapi document does not validate; importing its operations anyway",
			zap.String("openapi", key), zap.Error(err))
	}
	base, err := baseURL(cfg, doc, loc)
	if err != nil {
		return nil, fmt.Errorf("openapi.%s: %w", key, err)
	}
	conv, err := newConverter(doc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	var eps []*endpoint
	if doc.Paths == nil {
		return nil, nil
	}
	paths := doc.Paths.Map()
	keys := make([]string, 0, len(paths))
	for p := range paths {
		keys = append(keys, p)
	}
	sort.Strings(keys)
	for _, p := range keys {
		item := paths[p]
		if item == nil {
			continue
		}
		ops := item.Operations()
		for _, m := range methods {
			op := ops[m]
			if op == nil || !selected(cfg, m, op, operationName(m, p, op)) {
				continue
			}
			e, err := conv.endpoint(key, cfg, base, m, p, item, op)
			if err != nil {
				log.Warn("openapi operation skipped", zap.String("openapi", key),
					zap.String("operation", operationName(m, p, op)), zap.Error(err))
				continue
			}
			eps = append(eps, e)
		}
	}
	if len(eps) == 0 {
		log.Warn("openapi document gives no tools: no operation passed the filters", zap.String("openapi", key))
	}
	return eps, nil
}

// baseURL is where the operations' paths are appended: base_url, else the
// document's first server with its variables at their defaults, resolved
// against the document's own URL when relative.
func baseURL(cfg config.OpenAPI, doc *openapi3.T, loc *url.URL) (string, error) {
	raw := cfg.BaseURL
	if raw == "" {
		if len(doc.Servers) == 0 || doc.Servers[0] == nil {
			return "", errors.New("base_url: the document names no server; set base_url")
		}
		s := doc.Servers[0]
		raw = s.URL
		for name, v := range s.Variables {
			if v != nil {
				raw = strings.ReplaceAll(raw, "{"+name+"}", v.Default)
			}
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("base_url: %q is not a URL", raw)
	}
	if !u.IsAbs() {
		if !isURL(loc.String()) {
			return "", fmt.Errorf("base_url: the document's server %q is relative and the document is a file; set base_url", raw)
		}
		u = loc.ResolveReference(u)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("base_url: %q is not an http(s) URL", raw)
	}
	return strings.TrimSuffix(u.String(), "/"), nil
}

// selected applies the tags, methods and operations filters.
func selected(cfg config.OpenAPI, method string, op *openapi3.Operation, name string) bool {
	if len(cfg.Tags) > 0 && !overlaps(cfg.Tags, op.Tags) {
		return false
	}
	if len(cfg.Methods) > 0 && !containsFold(cfg.Methods, method) {
		return false
	}
	if len(cfg.Operations) > 0 {
		for _, g := range cfg.Operations {
			if ok, _ := path.Match(g, name); ok {
				return true
			}
		}
		return false
	}
	return true
}

func overlaps(a, b []string) bool {
	for _, x := range a {
		if containsFold(b, x) {
			return true
		}
	}
	return false
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// operationName is an operation's operationId, or for one without, a name
// made of its method and path ("get_pets_petId"), which the operations
// filter also matches.
func operationName(method, p string, op *openapi3.Operation) string {
	if op.OperationID != "" {
		return op.OperationID
	}
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	for _, seg := range strings.Split(p, "/") {
		seg = strings.Trim(seg, "{}")
		if seg == "" {
			continue
		}
		b.WriteByte('_')
		b.WriteString(seg)
	}
	return b.String()
}

// description is what the model reads about an operation.
func description(method, p string, op *openapi3.Operation) string {
	parts := []string{}
	if s := strings.TrimSpace(op.Summary); s != "" {
		parts = append(parts, s)
	}
	if d := strings.TrimSpace(op.Description); d != "" && d != strings.TrimSpace(op.Summary) {
		parts = append(parts, d)
	}
	if len(parts) == 0 {
		parts = append(parts, method+" "+p)
	}
	d := strings.Join(parts, "\n\n")
	if op.Deprecated {
		d = "(Deprecated.) " + d
	}
	if len(d) > maxDescription {
		d = cutRunes(d, maxDescription) + "…"
	}
	return d
}

// endpoint builds the endpoint of one operation. Path, query and header
// parameters become arguments of the same name (a clash takes the suffix
// _<in>); the request body is the "body" argument, kept apart from the
// parameters so that neither can shadow the other.
func (c *converter) endpoint(key string, cfg config.OpenAPI, base, method, p string, item *openapi3.PathItem, op *openapi3.Operation) (*endpoint, error) {
	name := operationName(method, p, op)
	props := map[string]any{}
	var required []any
	params := map[string]param{}
	tmpl := p

	// Path parameters first, so that they keep
	// their names: the URL template uses them.
	all := mergeParams(item.Parameters, op.Parameters)
	sort.SliceStable(all, func(i, j int) bool { return all[i].In == "path" && all[j].In != "path" })
	for _, prm := range all {
		if prm.In == openapi3.ParameterInCookie {
			continue
		}
		arg := argName(prm.Name)
		if _, taken := props[arg]; taken {
			arg = argName(prm.Name + "_" + prm.In)
		}
		s := c.paramSchema(prm)
		props[arg] = s
		if prm.Required || prm.In == openapi3.ParameterInPath {
			required = append(required, arg)
		}
		switch prm.In {
		case openapi3.ParameterInPath:
			tmpl = strings.ReplaceAll(tmpl, "{"+prm.Name+"}", "{"+arg+"}")
		case openapi3.ParameterInQuery:
			params[arg] = queryParam(prm)
		case openapi3.ParameterInHeader:
			params[arg] = param{in: "header", name: prm.Name}
		}
	}
	// Documents that use a path placeholder without declaring it still
	// need the argument.
	for _, ph := range placeholders(tmpl) {
		if _, ok := props[ph]; !ok {
			props[ph] = map[string]any{"type": "string"}
			required = append(required, ph)
		}
	}

	var bodyArg string
	var form bool
	if rb := op.RequestBody; rb != nil && rb.Value != nil {
		mt, media, ok := pickMedia(rb.Value.Content)
		switch {
		case ok:
			bodyArg = "body"
			for i := 2; ; i++ {
				if _, taken := props[bodyArg]; !taken {
					break
				}
				bodyArg = fmt.Sprintf("body_%d", i)
			}
			s := c.schema(media.Schema)
			if d := strings.TrimSpace(rb.Value.Description); d != "" {
				if _, has := s["description"]; !has {
					s["description"] = d
				}
			}
			props[bodyArg] = s
			if rb.Value.Required {
				required = append(required, bodyArg)
			}
			form = mt == "application/x-www-form-urlencoded"
		case rb.Value.Required:
			return nil, fmt.Errorf("its request body is %s only; JSON and form bodies are supported", strings.Join(contentTypes(rb.Value.Content), ", "))
		}
	}

	// An argument the operation does not name has nowhere to go but where
	// it could change what the operator fixed.
	schema := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		schema["required"] = required
	}
	doc, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	var cache = cfg.Cache.D()
	if method != "GET" && method != "HEAD" {
		// Reusing the answer of a POST is not the same as sending it again.
		cache = 0
	}
	return &endpoint{
		tool: tools.Tool{
			Name:        tools.Name(Namespace, key+"_"+name),
			Description: description(method, p, op),
			Schema:      doc,
			Queue:       cfg.Queue,
			Remote:      name,
			Timeout:     cfg.Timeout.D(),
			CacheTTL:    cache,
			Approval:    tools.NewApproval(cfg.ApprovalMode(), tools.WritingMethod(method), key, name, description(method, p, op), cfg.ApproversOrAsker()),
		},
		service: key,
		method:  method,
		url:     base + tmpl,
		headers: cfg.Headers,
		params:  params,
		bodyArg: bodyArg,
		form:    form,
	}, nil
}

// queryParam is how a query parameter's arrays and objects are written,
// after its style: form (exploded by default), spaceDelimited,
// pipeDelimited or deepObject.
func queryParam(prm *openapi3.Parameter) param {
	p := param{in: "query", name: prm.Name, sep: ","}
	switch prm.Style {
	case "", "form":
		p.explode = prm.Explode == nil || *prm.Explode
	case "spaceDelimited":
		p.sep = " "
	case "pipeDelimited":
		p.sep = "|"
	case "deepObject":
		p.deep = true
	}
	return p
}

// mergeParams joins path-level and operation-level parameters; an
// operation's parameter replaces the path's one of the same name and place.
func mergeParams(pathLevel, opLevel openapi3.Parameters) []*openapi3.Parameter {
	var out []*openapi3.Parameter
	index := map[string]int{}
	for _, list := range []openapi3.Parameters{pathLevel, opLevel} {
		for _, r := range list {
			if r == nil || r.Value == nil {
				continue
			}
			k := r.Value.In + "\x00" + r.Value.Name
			if i, ok := index[k]; ok {
				out[i] = r.Value
				continue
			}
			index[k] = len(out)
			out = append(out, r.Value)
		}
	}
	return out
}

// paramSchema is the schema of a parameter, with its description.
func (c *converter) paramSchema(prm *openapi3.Parameter) map[string]any {
	var s map[string]any
	switch {
	case prm.Schema != nil:
		s = c.schema(prm.Schema)
	default:
		if _, media, ok := pickMedia(prm.Content); ok {
			s = c.schema(media.Schema)
		} else {
			s = map[string]any{"type": "string"}
		}
	}
	if d := strings.TrimSpace(prm.Description); d != "" {
		s["description"] = d
	}
	if prm.Deprecated {
		s["deprecated"] = true
	}
	return s
}

// pickMedia chooses the body encoding to send: JSON when offered, else a
// form, else whatever accepts anything (sent as JSON).
func pickMedia(content openapi3.Content) (string, *openapi3.MediaType, bool) {
	types := contentTypes(content)
	for _, want := range []func(string) bool{
		func(t string) bool { return t == "application/json" },
		func(t string) bool { return strings.HasSuffix(t, "+json") || strings.HasSuffix(t, "/json") },
		func(t string) bool { return t == "application/x-www-form-urlencoded" },
		func(t string) bool { return t == "*/*" },
	} {
		for _, t := range types {
			if want(strings.ToLower(t)) && content[t] != nil {
				return strings.ToLower(t), content[t], true
			}
		}
	}
	return "", nil, false
}

func contentTypes(content openapi3.Content) []string {
	types := make([]string, 0, len(content))
	for t := range content {
		types = append(types, t)
	}
	sort.Strings(types)
	return types
}

// argName makes a parameter name usable as an argument name and URL
// placeholder.
func argName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
			return r
		}
		return '_'
	}, s)
}
