package telemetrytest

import (
	"context"
	"testing"
	"time"

	"github.com/slackbot/slackbot/telemetry"
)

// Serve runs the bot's telemetry endpoint for m (nil: no metrics) and
// checks on a loopback port until the test ends, and returns its base URL.
func Serve(tb testing.TB, m *telemetry.Metrics, checks ...telemetry.Check) string {
	tb.Helper()
	srv, err := telemetry.Listen("127.0.0.1:0", telemetry.Handler(m, nil, checks...))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Close(ctx)
	})
	return "http://" + srv.Addr()
}
