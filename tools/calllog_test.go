package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func TestEveryCallLogsARequestAndAResponse(t *testing.T) {
	t.Parallel()
	p := &funcProvider{ns: "github", tools: []Tool{
		{Name: "github__search", Remote: "search", Schema: anyObject, Queue: "gh"},
		{Name: "github__broken", Remote: "broken", Schema: anyObject},
	}, call: func(_ context.Context, c Call) (Result, error) {
		if c.Name == "github__broken" {
			return Result{}, errors.New("upstream said no to token xoxb-1234567890-abcdef")
		}
		return Result{Content: "found: Authorization: Bearer abcdefghijklmnop"}, nil
	}}
	run := func(level zapcore.Level, session bool) *observer.ObservedLogs {
		core, logs := observer.New(level)
		o := newOrch(t, Options{Queues: map[string]int{"gh": 1}, Log: zap.New(core).With(zap.String("from", "orchestrator"))}, p)
		ctx := context.Background()
		if session {
			ctx = WithLogger(ctx, zap.New(core).With(zap.String("session", "s1")))
		}
		o.Execute(ctx, "c1", "github__search", `{"q":"key sk-abcdefghijklmnopqrstuvwx"}`, time.Second)
		o.Execute(ctx, "c2", "github__broken", `{}`, time.Second)
		return logs
	}

	t.Run("at info: one response line per call with its figures, no payloads", func(t *testing.T) {
		logs := run(zapcore.InfoLevel, false)
		if logs.FilterMessage("tool request").Len() != 0 {
			t.Fatal("request lines (with arguments) appear at info")
		}
		ok := logs.FilterMessage("tool response").FilterField(zap.String("remote", "github:search")).All()
		if len(ok) != 1 || ok[0].Level != zapcore.InfoLevel {
			t.Fatalf("response lines for search: %v", ok)
		}
		f := ok[0].ContextMap()
		for _, k := range []string{"latency", "bytes_in", "bytes_out", "ok", "queue", "queue_wait", "call_id", "tool"} {
			if _, has := f[k]; !has {
				t.Errorf("response line lacks %s: %v", k, f)
			}
		}
		if _, has := f["result"]; has {
			t.Error("the result is logged at info")
		}
		failed := logs.FilterMessage("tool response").FilterField(zap.String("remote", "github:broken")).All()
		if len(failed) != 1 || failed[0].Level != zapcore.WarnLevel || failed[0].ContextMap()["ok"] != false {
			t.Fatalf("a failed call's line: %v", failed)
		}
	})
	t.Run("at debug: arguments and results, with credentials removed", func(t *testing.T) {
		logs := run(zapcore.DebugLevel, false)
		req := logs.FilterMessage("tool request").FilterField(zap.String("remote", "github:search")).All()
		if len(req) != 1 || !strings.Contains(req[0].ContextMap()["arguments"].(string), `"q":"key sk-[redacted]"`) {
			t.Fatalf("request lines: %v", req)
		}
		var all strings.Builder
		for _, e := range logs.All() {
			for k, v := range e.ContextMap() {
				all.WriteString(k + "=" + toString(v) + "\n")
			}
		}
		for _, secret := range []string{"abcdefghijklmnopqrstuvwx", "abcdefghijklmnop", "1234567890-abcdef"} {
			if strings.Contains(all.String(), secret) {
				t.Errorf("the log holds %q:\n%s", secret, all.String())
			}
		}
		if !strings.Contains(all.String(), "result=found: Authorization: [redacted]") {
			t.Errorf("the result is missing at debug:\n%s", all.String())
		}
	})
	t.Run("a session's logger in the context takes the lines", func(t *testing.T) {
		logs := run(zapcore.InfoLevel, true)
		for _, e := range logs.All() {
			if e.ContextMap()["session"] != "s1" || e.ContextMap()["from"] != nil {
				t.Fatalf("line not from the session's logger: %v", e.ContextMap())
			}
		}
	})
}

func toString(v any) string { return fmt.Sprint(v) }
