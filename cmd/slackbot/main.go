// Command slackbot is the entry point: it reads the configuration, wires
// model providers and tools into an agent runner, and runs one of its
// subcommands. Wiring only — behaviour lives in the packages.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time by the Makefile (-ldflags -X main.version=…).
var version = "dev"

const usage = `slackbot — an LLM agent runtime whose front door is Slack.

Usage:
  slackbot run [--config FILE]    answer in Slack (Socket Mode) until stopped
  slackbot sessions [--config FILE] [--user U] [--channel C] [--since 24h]
                                  list the recorded sessions, newest first
  slackbot dev [--config FILE] [--listen 127.0.0.1:3000]
                                  the bot in a local Slack-like web page, no workspace needed
  slackbot ask [--config FILE] --agent NAME [--format FORMAT] "question"
                                  run one session and print its final report
  slackbot chat [--config FILE] [--agent NAME]
                                  talk to an agent in the terminal, one session per question
  slackbot agents [--config FILE] [--no-tools]
                                  list and validate the agent files; measure their tools against their models
  slackbot tools [--config FILE] [--agent NAME]
                                  start the tool providers and list the tools they offer
  slackbot render [--input markdown|report] [--builder-url] < FILE
                                  print Block Kit messages for Markdown or a final report
  slackbot manifest [--config FILE] [--name NAME] [--format yaml|json]
                                  print the Slack app manifest to paste into api.slack.com
  slackbot check [--config FILE]  check the Slack tokens, each model provider, each MCP server and each agent's tools
  slackbot version                print the version

The configuration defaults to ./slackbot.yaml (see slackbot.example.yaml).
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	var ec exitCode
	switch {
	case errors.As(err, &ec):
		os.Exit(int(ec))
	case errors.Is(err, errUsage):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "slackbot:", err)
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

// exitCode ends the program with a status and no further message.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	switch args[0] {
	case "ask":
		return runAsk(ctx, args[1:], stdin, stdout, stderr)
	case "chat":
		return runChat(ctx, args[1:], stdin, stdout, stderr)
	case "tools":
		return runTools(ctx, args[1:], stdout, stderr)
	case "run":
		return runSlack(ctx, args[1:], stderr)
	case "sessions":
		return runSessions(ctx, args[1:], stdout, stderr)
	case "dev":
		return runDev(ctx, args[1:], stdout, stderr)
	case "agents":
		return runAgents(ctx, args[1:], stdout, stderr)
	case "render":
		return runRender(args[1:], stdin, stdout, stderr)
	case "manifest":
		return runManifest(args[1:], stdout, stderr)
	case "check":
		return runCheck(ctx, args[1:], stdout, stderr)
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, "slackbot", version)
		return nil
	case "help", "--help", "-h":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprintf(stderr, "slackbot: unknown command %q\n\n%s", args[0], usage)
	return errUsage
}
