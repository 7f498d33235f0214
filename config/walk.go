package config

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// walker prepares a parsed YAML document for decoding into a Go type. It
// walks the syntax tree beside the type, so that in one pass it can
//
//   - expand ${VAR} in scalar values (never in keys, and after parsing, so an
//     expanded value cannot inject YAML and line numbers stay right);
//   - report every unknown key with a suggestion, not just the first;
//   - check scalars against the field's kind (a duration with a unit, an
//     integer, a boolean) and keep text fields as written (0123 stays
//     "0123", 1.10 stays "1.10");
//   - record the line of every key and which keys are set, for the
//     semantic checks that come after decoding;
//   - remember the values of credentials, so no message repeats them.
//
// A value with a problem is replaced by null, so the document still decodes
// and the checks after decoding can report the file's other problems in
// the same run. The decoder then runs on the rewritten tree, with unknown
// fields disallowed as a backstop when the walk found nothing.
type walker struct {
	file    string
	lookup  func(string) (string, bool)
	p       *problems
	lines   map[string]int  // YAML path → line of its key or list item
	present map[string]bool // YAML path → set to something other than null

	bad      []string // paths the walk reported
	checking bool     // the walk is over; errors now come from checks
}

func newWalker(file string, lookup func(string) (string, bool), p *problems) *walker {
	return &walker{file: file, lookup: lookup, p: p, lines: map[string]int{}, present: map[string]bool{}}
}

var (
	secretType   = reflect.TypeFor[Secret]()
	durationType = reflect.TypeFor[Duration]()
	promptType   = reflect.TypeFor[SuggestedPrompt]()
)

// line returns the line of path, or of its closest recorded ancestor.
func (w *walker) line(path string) int {
	for path != "" {
		if l, ok := w.lines[path]; ok {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return 0
}

// errorf reports a problem at path. A check's problem at a path the walk
// already reported (or at one of its ancestors) is a consequence of the
// value having been dropped, and is left out.
func (w *walker) errorf(path, format string, args ...any) {
	if w.checking {
		for _, b := range w.bad {
			if b == path || strings.HasPrefix(b, path+".") || strings.HasPrefix(b, path+"[") {
				return
			}
		}
	} else {
		w.bad = append(w.bad, path)
	}
	w.p.add(w.file, w.line(path), path, format, args...)
}

// null is what a value with a problem becomes.
func null(n ast.Node) ast.Node {
	var pos *token.Position
	if tk := n.GetToken(); tk != nil {
		pos = tk.Position
	}
	return ast.Null(token.New("null", "null", pos))
}

// node walks n as a value of type t and returns the node to keep in its
// place (scalars may be replaced by a node of the right type).
func (w *walker) node(n ast.Node, t reflect.Type, path string, sensitive bool) ast.Node {
	if n == nil {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch v := n.(type) {
	case *ast.AnchorNode:
		v.Value = w.node(v.Value, t, path, sensitive)
		return v
	case *ast.TagNode:
		v.Value = w.node(v.Value, t, path, sensitive)
		return v
	case *ast.AliasNode, *ast.NullNode, *ast.CommentGroupNode, *ast.CommentNode:
		return n
	}
	ok := true
	switch {
	case t == durationType:
		return w.duration(n, path)
	case t == promptType && !isMapping(n):
		// A suggested prompt written as a plain string is its title and
		// its message both.
		return w.scalar(n, reflect.TypeFor[string](), path, sensitive)
	case t.Kind() == reflect.Struct:
		ok = w.structNode(n, t, path, sensitive)
	case t.Kind() == reflect.Map:
		ok = w.mapNode(n, t, path, sensitive)
	case t.Kind() == reflect.Slice:
		ok = w.seqNode(n, t.Elem(), path, sensitive)
	case t.Kind() == reflect.Interface:
		return w.anyNode(n, path)
	default:
		return w.scalar(n, t, path, sensitive)
	}
	if !ok {
		return null(n)
	}
	return n
}

func (w *walker) structNode(n ast.Node, t reflect.Type, path string, sensitive bool) bool {
	entries, ok := mappingEntries(n)
	if !ok {
		w.errorf(path, "want a mapping (key: value lines), got %s", describe(n))
		return false
	}
	fields, keys := yamlFields(t)
	for _, mv := range entries {
		key, merge := keyString(mv.Key)
		if merge {
			continue // merged keys are checked by the decoder
		}
		kp := join(path, key)
		f, ok := fields[key]
		if !ok {
			msg := fmt.Sprintf("unknown key %q", key)
			if s := suggest(key, keys); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			w.bad = append(w.bad, path)
			w.p.add(w.file, keyLine(mv), path, "%s; valid keys: %s", msg, oneOf(keys))
			continue
		}
		w.lines[kp] = keyLine(mv)
		mv.Value = w.node(mv.Value, f.Type, kp, sensitive || f.Type == secretType)
		w.present[kp] = !isNull(mv.Value)
	}
	return true
}

func (w *walker) mapNode(n ast.Node, t reflect.Type, path string, sensitive bool) bool {
	entries, ok := mappingEntries(n)
	if !ok {
		w.errorf(path, "want a mapping (name: value lines), got %s", describe(n))
		return false
	}
	// Header and environment values are credentials more often than not.
	if last := path[strings.LastIndexByte(path, '.')+1:]; last == "headers" || last == "env" {
		sensitive = true
	}
	for _, mv := range entries {
		key, merge := keyString(mv.Key)
		if merge {
			continue
		}
		kp := join(path, key)
		w.lines[kp] = keyLine(mv)
		mv.Value = w.node(mv.Value, t.Elem(), kp, sensitive)
		w.present[kp] = !isNull(mv.Value)
	}
	return true
}

func (w *walker) seqNode(n ast.Node, elem reflect.Type, path string, sensitive bool) bool {
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		w.errorf(path, "want a list ([a, b] or \"- item\" lines), got %s", describe(n))
		return false
	}
	for i, item := range seq.Values {
		ip := fmt.Sprintf("%s[%d]", path, i)
		if tk := item.GetToken(); tk != nil && tk.Position != nil {
			w.lines[ip] = tk.Position.Line
		}
		seq.Values[i] = w.node(item, elem, ip, sensitive)
	}
	return true
}

// anyNode walks a free-form value (a JSON Schema, a request body): strings
// are expanded, and a plain scalar whose text changed is re-read as YAML
// would read it, so `maximum: ${MAX:-5}` is still a number.
func (w *walker) anyNode(n ast.Node, path string) ast.Node {
	switch v := n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		entries, _ := mappingEntries(v)
		for _, mv := range entries {
			key, _ := keyString(mv.Key)
			kp := join(path, key)
			w.lines[kp] = keyLine(mv)
			mv.Value = w.node(mv.Value, reflect.TypeFor[any](), kp, false)
		}
	case *ast.SequenceNode:
		w.seqNode(v, reflect.TypeFor[any](), path, false)
	case *ast.StringNode:
		s, err := expand(v.Value, w.lookup)
		if err != nil {
			w.errorf(path, "%v", err)
			return null(n)
		}
		if s != v.Value && v.Token.Type == token.StringType {
			return typedScalar(s, v.Token.Position)
		}
		v.Value = s
	case *ast.LiteralNode:
		s, err := expand(v.Value.Value, w.lookup)
		if err != nil {
			w.errorf(path, "%v", err)
			return null(n)
		}
		v.Value.Value = s
	}
	return n
}

// scalar walks a value for a string, number or boolean field.
func (w *walker) scalar(n ast.Node, t reflect.Type, path string, sensitive bool) ast.Node {
	text, ok := w.text(n, path)
	if !ok {
		return null(n)
	}
	pos := n.GetToken().Position
	if t.Kind() == reflect.String {
		switch {
		case t == secretType:
			w.p.secret(text, 4)
		case sensitive:
			// A header or environment value: often a credential, but also
			// often a word like "info" that messages must keep.
			w.p.secret(text, 12)
		}
		switch v := n.(type) {
		case *ast.StringNode:
			v.Value = text
			return v
		case *ast.LiteralNode:
			v.Value.Value = text
			return v
		}
		return ast.String(token.String(text, text, pos))
	}
	// An empty value (often an expanded ${VAR:-}) means "not set".
	if strings.TrimSpace(text) == "" {
		return ast.Null(token.New("null", "null", pos))
	}
	shown := fmt.Sprintf("%q", text)
	if sensitive {
		shown = "the value"
	}
	tk := token.New(text, text, pos)
	switch t.Kind() {
	case reflect.Bool:
		if tk.Type == token.BoolType {
			return ast.Bool(tk)
		}
		w.errorf(path, "%s is not a boolean; write true or false", shown)
	case reflect.Float32, reflect.Float64:
		switch tk.Type {
		case token.IntegerType, token.BinaryIntegerType, token.OctetIntegerType, token.HexIntegerType:
			return ast.Integer(tk)
		case token.FloatType:
			return ast.Float(tk)
		}
		w.errorf(path, "%s is not a number", shown)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		switch tk.Type {
		case token.IntegerType, token.BinaryIntegerType, token.OctetIntegerType, token.HexIntegerType:
			return ast.Integer(tk)
		}
		w.errorf(path, "%s is not a whole number", shown)
	}
	return null(n)
}

// duration checks a Duration value here, where its line is known (the
// decoder reports a failing UnmarshalText without a position).
func (w *walker) duration(n ast.Node, path string) ast.Node {
	text, ok := w.text(n, path)
	if !ok {
		return null(n)
	}
	var d Duration
	if err := d.UnmarshalText([]byte(text)); err != nil {
		w.errorf(path, "%v", err)
		return null(n)
	}
	if strings.TrimSpace(text) == "" {
		return ast.Null(token.New("null", "null", n.GetToken().Position))
	}
	return ast.String(token.String(text, text, n.GetToken().Position))
}

// text returns a scalar's text, expanded, or reports why it has none.
func (w *walker) text(n ast.Node, path string) (string, bool) {
	var raw string
	switch v := n.(type) {
	case *ast.StringNode:
		raw = v.Value
	case *ast.LiteralNode:
		raw = v.Value.Value
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		return v.GetToken().Value, true
	default:
		w.errorf(path, "want a single value, got %s", describe(n))
		return "", false
	}
	s, err := expand(raw, w.lookup)
	if err != nil {
		w.errorf(path, "%v", err)
		return "", false
	}
	return s, true
}

// typedScalar builds the node YAML would have parsed from a plain scalar.
func typedScalar(s string, pos *token.Position) ast.Node {
	if s == "" {
		return ast.String(token.String(s, s, pos))
	}
	tk := token.New(s, s, pos)
	switch tk.Type {
	case token.IntegerType, token.BinaryIntegerType, token.OctetIntegerType, token.HexIntegerType:
		return ast.Integer(tk)
	case token.FloatType:
		return ast.Float(tk)
	case token.BoolType:
		return ast.Bool(tk)
	case token.NullType:
		return ast.Null(tk)
	}
	return ast.String(token.String(s, s, pos))
}

// yamlFields maps a struct's yaml keys to its fields, skipping "-". The
// keys of an embedded struct tagged ",inline" are the struct's own.
func yamlFields(t reflect.Type) (map[string]reflect.StructField, []string) {
	fields := map[string]reflect.StructField{}
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if f.Anonymous && opts == "inline" {
			inner, innerKeys := yamlFields(f.Type)
			for _, k := range innerKeys {
				fields[k] = inner[k]
			}
			keys = append(keys, innerKeys...)
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fields[name] = f
		keys = append(keys, name)
	}
	return fields, keys
}

func mappingEntries(n ast.Node) ([]*ast.MappingValueNode, bool) {
	switch v := n.(type) {
	case *ast.MappingNode:
		return v.Values, true
	case *ast.MappingValueNode:
		return []*ast.MappingValueNode{v}, true
	}
	return nil, false
}

func isMapping(n ast.Node) bool {
	_, ok := mappingEntries(n)
	return ok
}

func keyString(k ast.MapKeyNode) (key string, merge bool) {
	switch v := k.(type) {
	case *ast.MergeKeyNode:
		return "<<", true
	case *ast.StringNode:
		return v.Value, false
	case *ast.MappingKeyNode:
		if v.Value != nil {
			return v.Value.GetToken().Value, false
		}
	}
	return k.GetToken().Value, false
}

func keyLine(mv *ast.MappingValueNode) int {
	if tk := mv.Key.GetToken(); tk != nil && tk.Position != nil {
		return tk.Position.Line
	}
	return 0
}

func isNull(n ast.Node) bool {
	if n == nil {
		return true
	}
	_, ok := n.(*ast.NullNode)
	return ok
}

func describe(n ast.Node) string {
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.AliasNode:
		return "an alias"
	}
	return "a single value"
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
