package redact

import (
	"encoding/json"
	"fmt"
	"sort"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Core wraps c so that every entry it writes has passed through String: the
// message and every field that can hold text (strings, errors, Stringers,
// objects, arrays and reflected values), including fields added with With.
func Core(c zapcore.Core) zapcore.Core { return core{c} }

type core struct{ zapcore.Core }

func (c core) With(fields []zapcore.Field) zapcore.Core {
	return core{c.Core.With(redactFields(fields))}
}

func (c core) Check(ent zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(ent.Level) {
		return ce.AddCore(ent, c)
	}
	return ce
}

func (c core) Write(ent zapcore.Entry, fields []zapcore.Field) error {
	ent.Message = String(ent.Message)
	ent.Stack = String(ent.Stack)
	return c.Core.Write(ent, redactFields(fields))
}

// redactFields returns fields with their text passed through String. Fields that
// hold only numbers, booleans, times or durations are returned as they are.
func redactFields(fields []zapcore.Field) []zapcore.Field {
	var out []zapcore.Field
	for i, f := range fields {
		repl, changed := field(f)
		if !changed {
			if out != nil {
				out = append(out, f)
			}
			continue
		}
		if out == nil {
			out = make([]zapcore.Field, 0, len(fields)+1)
			out = append(out, fields[:i]...)
		}
		out = append(out, repl...)
	}
	if out == nil {
		return fields
	}
	return out
}

// field returns f with its text redacted, and whether it had to change.
func field(f zapcore.Field) ([]zapcore.Field, bool) {
	switch f.Type {
	case zapcore.StringType:
		if s := String(f.String); s != f.String {
			return []zapcore.Field{zap.String(f.Key, s)}, true
		}
		return nil, false
	case zapcore.BoolType, zapcore.DurationType, zapcore.Float64Type, zapcore.Float32Type,
		zapcore.Int64Type, zapcore.Int32Type, zapcore.Int16Type, zapcore.Int8Type,
		zapcore.Uint64Type, zapcore.Uint32Type, zapcore.Uint16Type, zapcore.Uint8Type,
		zapcore.UintptrType, zapcore.TimeType, zapcore.TimeFullType, zapcore.SkipType,
		zapcore.Complex128Type, zapcore.Complex64Type, zapcore.UnknownType:
		return nil, false
	case zapcore.NamespaceType:
		return nil, false
	case zapcore.ReflectType:
		// Seen the way the JSON encoder would show it.
		b, err := json.Marshal(f.Interface)
		var v any
		if err != nil || json.Unmarshal(b, &v) != nil {
			return []zapcore.Field{zap.String(f.Key, String(fmt.Sprint(f.Interface)))}, true
		}
		return []zapcore.Field{zap.Any(f.Key, value(v))}, true
	}
	// Anything else is encoded as it would be, then its text redacted: an
	// error adds "error" and "errorVerbose", an object its keys.
	enc := zapcore.NewMapObjectEncoder()
	f.AddTo(enc)
	keys := make([]string, 0, len(enc.Fields))
	for k := range enc.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]zapcore.Field, 0, len(keys))
	for _, k := range keys {
		switch v := value(enc.Fields[k]).(type) {
		case string:
			out = append(out, zap.String(k, v))
		default:
			out = append(out, zap.Any(k, v))
		}
	}
	return out, true
}

// value redacts the strings of a value decoded by a map encoder.
func value(v any) any {
	switch x := v.(type) {
	case string:
		return String(x)
	case []byte:
		return String(string(x))
	case map[string]any:
		for k, e := range x {
			x[k] = value(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = value(e)
		}
		return x
	}
	return v
}
