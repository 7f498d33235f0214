package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"sync"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/slackbot/slackbot/redact"
)

type logKey struct{}

// WithLogger returns a context whose tool calls log to log — a session's
// logger, carrying its session and agent fields — instead of the
// orchestrator's own.
func WithLogger(ctx context.Context, log *zap.Logger) context.Context {
	return context.WithValue(ctx, logKey{}, log)
}

func (o *Orchestrator) logger(ctx context.Context) *zap.Logger {
	if l, ok := ctx.Value(logKey{}).(*zap.Logger); ok && l != nil {
		return l
	}
	return o.log
}

// maxLoggedPayload bounds the arguments and results written at debug level.
const maxLoggedPayload = 4096

// logRequest writes the request line of a call, at debug level: the
// arguments are in it, so it stays out of production logs by default.
func logRequest(log *zap.Logger, e *entry, id, args string) {
	ce := log.Check(zapcore.DebugLevel, "tool request")
	if ce == nil {
		return
	}
	fields := []zap.Field{zap.String("remote", e.remote), zap.String("tool", e.tool.Name), zap.String("call_id", id),
		zap.Int("bytes_in", len(args)), zap.String("arguments", scrub(args))}
	if e.queue != nil {
		fields = append(fields, zap.String("queue", e.queue.name))
	}
	ce.Write(fields...)
}

// logResponse writes the response line of a call: info when it succeeded,
// warn when it failed. The result itself is added only at debug level.
func logResponse(log *zap.Logger, e *entry, id, name string, in int, out *Outcome) {
	level := zapcore.InfoLevel
	if !out.OK() {
		level = zapcore.WarnLevel
	}
	ce := log.Check(level, "tool response")
	if ce == nil {
		return
	}
	remote := out.Remote
	if remote == "" && e != nil {
		remote = e.remote
	}
	fields := make([]zap.Field, 0, 14)
	fields = append(fields, zap.String("remote", remote), zap.String("tool", name), zap.String("call_id", id),
		zap.Duration("latency", out.Latency), zap.Int("bytes_in", in), zap.Int("bytes_out", len(out.Content)), zap.Bool("ok", out.OK()))
	if out.Queue != "" {
		fields = append(fields, zap.String("queue", out.Queue), zap.Duration("queue_wait", out.QueueWait))
	}
	if out.Cached {
		fields = append(fields, zap.Bool("cached", true))
	}
	if out.Oversize {
		fields = append(fields, zap.Int("original_bytes", out.OriginalBytes), zap.String("oversize", out.OversizeReason))
	}
	if out.Failure != "" {
		fields = append(fields, zap.String("failure", string(out.Failure)))
	}
	if out.Err != nil {
		fields = append(fields, zap.String("error", scrub(out.Err.Error())))
	} else if out.IsError {
		fields = append(fields, zap.String("error", scrub(Snippet(out.Content, 300))))
	}
	if log.Core().Enabled(zapcore.DebugLevel) {
		fields = append(fields, zap.String("result", scrub(out.Content)))
	}
	ce.Write(fields...)
}

// scrub bounds a payload for the log and removes what looks like a
// credential: API keys, bearer tokens and Slack tokens.
func scrub(s string) string {
	return redact.String(Snippet(s, maxLoggedPayload))
}

// cacheKey is the tool's provider name and its arguments in a canonical
// form (object keys sorted, no spaces), so that {"a":1,"b":2} and
// { "b": 2, "a": 1 } share an entry. Arguments holding an integer too large
// for a float64 to keep exactly are keyed by their raw text instead, so two
// such numbers never share an entry.
func cacheKey(tool string, raw []byte, v any) string {
	bp := keyBufs.Get().(*[]byte)
	b := append((*bp)[:0], tool...)
	b = append(b, 0)
	b, exact := appendCanonical(b, v)
	if !exact {
		b = append(b[:len(tool)+1], raw...)
	}
	key := string(b)
	*bp = b
	keyBufs.Put(bp)
	return key
}

var keyBufs = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// maxExact is the largest magnitude below which every integer is a float64.
const maxExact = 1 << 53

// appendCanonical writes v, decoded by encoding/json, as compact JSON with
// object keys in sorted order. exact is false when a number may have lost
// digits in decoding.
func appendCanonical(b []byte, v any) (_ []byte, exact bool) {
	exact = true
	switch v := v.(type) {
	case map[string]any:
		var small [8]string
		keys := small[:0]
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendQuote(b, k)
			b = append(b, ':')
			var ok bool
			b, ok = appendCanonical(b, v[k])
			exact = exact && ok
		}
		return append(b, '}'), exact
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			b, ok = appendCanonical(b, e)
			exact = exact && ok
		}
		return append(b, ']'), exact
	case string:
		return strconv.AppendQuote(b, v), true
	case float64:
		return strconv.AppendFloat(b, v, 'g', -1, 64), v > -maxExact && v < maxExact
	case json.Number:
		return append(b, v...), true
	case bool:
		return strconv.AppendBool(b, v), true
	case nil:
		return append(b, "null"...), true
	}
	return fmt.Appendf(b, "%v", v), true
}

func sortTools(ts []Tool) {
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
}

func sortBy[T any](s []T, key func(T) string) {
	sort.Slice(s, func(i, j int) bool { return key(s[i]) < key(s[j]) })
}
