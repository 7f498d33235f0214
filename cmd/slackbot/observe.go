package main

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/slack"
	"github.com/slackbot/slackbot/state"
	"github.com/slackbot/slackbot/telemetry"
)

// observability is what metrics.listen and tracing ask for: the metrics
// (nil without metrics.listen), the tracer (nil without an endpoint) and,
// once serve is called, the HTTP server of /metrics, /healthz and /readyz.
type observability struct {
	metrics *telemetry.Metrics
	tracer  *telemetry.Tracer
	server  *telemetry.Server
	log     *zap.Logger
}

// newObservability builds the metrics and the tracer the configuration
// asks for; it serves nothing yet.
func newObservability(w *wiring) (*observability, error) {
	o := &observability{log: w.log.Named("telemetry")}
	if w.cfg.Metrics.Listen != "" {
		o.metrics = telemetry.NewMetrics()
	}
	tr, err := telemetry.NewTracer(w.cfg.Tracing, version)
	if err != nil {
		return nil, err
	}
	o.tracer = tr
	if tr != nil {
		o.log.Info("tracing sessions over OTLP/HTTP", zap.String("service", w.cfg.Tracing.ServiceName), zap.Float64("sample_ratio", w.cfg.Tracing.Ratio()))
	}
	return o, nil
}

// serve starts the HTTP endpoint on metrics.listen, when set, with the
// readiness checks of the bot's socket, the state store and the MCP
// servers.
func (o *observability) serve(w *wiring, bot *slack.Bot, store state.Store) error {
	if o.metrics == nil {
		return nil
	}
	checks := []telemetry.Check{bot.ReadyCheck(), telemetry.StoreCheck(store)}
	if w.mcp != nil {
		checks = append(checks, telemetry.MCPCheck(w.mcp.Down))
	}
	srv, err := telemetry.Listen(w.cfg.Metrics.Listen, telemetry.Handler(o.metrics, o.log, checks...))
	if err != nil {
		return fmt.Errorf("metrics.listen: %w", err)
	}
	o.server = srv
	o.log.Info("serving /metrics, /healthz and /readyz", zap.String("address", srv.Addr()))
	return nil
}

// close stops the endpoint and sends the spans not exported yet, each
// within a few seconds.
func (o *observability) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if o.server != nil {
		if err := o.server.Close(ctx); err != nil {
			o.log.Warn("stopping the metrics endpoint", zap.Error(err))
		}
	}
	if err := o.tracer.Shutdown(ctx); err != nil {
		o.log.Warn("the last spans were not exported", zap.Error(err))
	}
}
