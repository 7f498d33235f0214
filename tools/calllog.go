package tools

import (
	"context"
	"encoding/json"
	"regexp"
	"sort"
	"strings"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
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
		fields = append(fields, zap.Int("original_bytes", out.OriginalBytes))
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
	return credential.ReplaceAllString(Snippet(s, maxLoggedPayload), "$1[redacted]")
}

// credential matches the shapes of secrets that travel in tool arguments
// and results: OpenAI and Anthropic keys, Slack tokens, GitHub tokens, AWS
// access keys, and whatever follows "Bearer " or "Basic ".
var credential = regexp.MustCompile(`(\b(?:sk-|xox[abposre]-|xapp-|ghp_|gho_|ghs_|github_pat_|AKIA)|(?i:\b(?:bearer|basic)\s+))[A-Za-z0-9_\-.=+/*]{6,}`)

// cacheKey is the tool's provider name and its arguments in canonical JSON
// (keys sorted, no spaces), so that {"a":1,"b":2} and { "b": 2, "a": 1 }
// share an entry.
func cacheKey(tool string, raw json.RawMessage, v any) string {
	b, err := json.Marshal(v) // maps marshal with sorted keys; numbers stay json.Number
	if err != nil {
		b = raw
	}
	var sb strings.Builder
	sb.Grow(len(tool) + 1 + len(b))
	sb.WriteString(tool)
	sb.WriteByte(0)
	sb.Write(b)
	return sb.String()
}

func sortTools(ts []Tool) {
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
}

func sortBy[T any](s []T, key func(T) string) {
	sort.Slice(s, func(i, j int) bool { return key(s[i]) < key(s[j]) })
}
