package telemetry

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Budgets is a snapshot of how the Slack headend spends its Web API rate
// budgets: one entry per method, and the pace of progress refreshes.
type Budgets struct {
	Methods []MethodBudget
	// LiveProgress is how many progress messages are being kept fresh,
	// and ProgressInterval the least time between two refreshes of each.
	LiveProgress     int
	ProgressInterval time.Duration
}

// MethodBudget is one Web API method's budget and what it has cost.
type MethodBudget struct {
	Method  string
	Calls   int64         // calls let through since the start
	Waiting int           // calls waiting for a token now
	Wait    time.Duration // total time calls waited for a token
	// PerMinute is the budget (each channel's, for a budget per
	// channel), lowered for a while after a 429; 0 when not limited.
	PerMinute float64
	// Utilisation is the share of the budget used over the last minute.
	Utilisation float64
}

// budgetCollector reads a Budgets snapshot at each scrape.
type budgetCollector struct {
	read atomic.Pointer[func() Budgets]

	calls, wait, waiting, perMinute, used, live, interval *prometheus.Desc
}

func newBudgetCollector() *budgetCollector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return &budgetCollector{
		calls:     d("slackbot_slack_budget_calls_total", "Slack Web API calls let through by the rate limiter, by method.", "method"),
		wait:      d("slackbot_slack_budget_wait_seconds_total", "Time Slack Web API calls waited for their rate budget, by method.", "method"),
		waiting:   d("slackbot_slack_budget_waiting", "Slack Web API calls waiting for their rate budget now, by method.", "method"),
		perMinute: d("slackbot_slack_budget_per_minute", "The rate budget of a Slack Web API method a minute (each channel's when per channel), lowered for a while after a 429.", "method"),
		used:      d("slackbot_slack_budget_utilisation_ratio", "Share of a Slack Web API method's budget used over the last minute (the busiest channel's when per channel).", "method"),
		live:      d("slackbot_progress_messages", "Progress messages being kept fresh now."),
		interval:  d("slackbot_progress_interval_seconds", "The least time between two refreshes of a progress message now: progress_interval, stretched under load."),
	}
}

func (c *budgetCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.calls, c.wait, c.waiting, c.perMinute, c.used, c.live, c.interval} {
		ch <- d
	}
}

func (c *budgetCollector) Collect(ch chan<- prometheus.Metric) {
	read := c.read.Load()
	if read == nil {
		return
	}
	b := (*read)()
	for _, m := range b.Methods {
		ch <- prometheus.MustNewConstMetric(c.calls, prometheus.CounterValue, float64(m.Calls), m.Method)
		ch <- prometheus.MustNewConstMetric(c.wait, prometheus.CounterValue, m.Wait.Seconds(), m.Method)
		ch <- prometheus.MustNewConstMetric(c.waiting, prometheus.GaugeValue, float64(m.Waiting), m.Method)
		if m.PerMinute > 0 {
			ch <- prometheus.MustNewConstMetric(c.perMinute, prometheus.GaugeValue, m.PerMinute, m.Method)
			ch <- prometheus.MustNewConstMetric(c.used, prometheus.GaugeValue, m.Utilisation, m.Method)
		}
	}
	ch <- prometheus.MustNewConstMetric(c.live, prometheus.GaugeValue, float64(b.LiveProgress))
	ch <- prometheus.MustNewConstMetric(c.interval, prometheus.GaugeValue, b.ProgressInterval.Seconds())
}

// WatchBudgets makes each scrape read the rate budgets from read (the last
// one given wins).
func (m *Metrics) WatchBudgets(read func() Budgets) {
	if m == nil {
		return
	}
	m.budgets.read.Store(&read)
}
