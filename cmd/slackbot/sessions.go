package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/state"
)

// runSessions lists the session records of the configured state store,
// newest first: who asked where, which agent answered, how it ended, and
// what it cost.
func runSessions(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sessions", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "slackbot.yaml", "configuration file")
	user := fs.String("user", "", "only sessions of this user id")
	channel := fs.String("channel", "", "only sessions in this channel id")
	since := fs.Duration("since", 0, "only sessions started this long ago or later (e.g. 24h)")
	limit := fs.Int("limit", state.DefaultSessionLimit, "at most this many")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return err
	}
	store, err := state.Open(cfg.State)
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	defer store.Close()
	f := state.SessionFilter{User: *user, Channel: *channel, Limit: *limit}
	if *since > 0 {
		f.Since = time.Now().Add(-*since)
	}
	recs, err := store.Sessions(ctx, f)
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STARTED\tUSER\tCHANNEL\tAGENT\tSTATUS\tTURNS\tTOKENS\tCOST\tDURATION\tFEEDBACK\tAPPROVALS\tANSWER")
	for _, r := range recs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t$%.4f\t%s\t%s\t%s\t%s\n", r.Started.Local().Format("2006-01-02 15:04:05"),
			r.User, r.Channel, r.Agent, r.Status, r.Turns, r.InputTokens+r.OutputTokens, r.CostUSD,
			r.Duration.Round(100*time.Millisecond), feedbackSummary(r.Feedback), approvalSummary(r.Approvals), firstLine(strings.TrimSpace(r.Report), 60))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "%d sessions\n", len(recs))
	return nil
}

// feedbackSummary counts a session's verdicts: "+2 -1" for two people who
// found the answer good and one who did not, "-" for none.
func feedbackSummary(list []state.Feedback) string {
	up, down := 0, 0
	for _, f := range list {
		switch f.Value {
		case "positive":
			up++
		case "negative":
			down++
		}
	}
	var parts []string
	if up > 0 {
		parts = append(parts, fmt.Sprintf("+%d", up))
	}
	if down > 0 {
		parts = append(parts, fmt.Sprintf("-%d", down))
	}
	return dash(strings.Join(parts, " "))
}
