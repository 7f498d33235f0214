// Command testserver is an MCP server over stdio for the mcp package's
// fault tests; flags choose how it misbehaves.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/slackbot/slackbot/tools/mcp/internal/fakeserver"
)

func main() {
	exitAtStart := flag.String("exit-at-start", "", "append \"pid unix-ns\" to this file and exit 1")
	startLog := flag.String("start-log", "", "append \"pid start-ns ready-ns\" to this file, starting -start-delay before ready")
	startDelay := flag.Duration("start-delay", 0, "how long starting takes")
	grandchild := flag.String("grandchild", "", "spawn a child that ignores SIGTERM; write \"pid childpid\" to this file")
	sleeper := flag.Bool("sleeper", false, "ignore SIGTERM and sleep forever (the grandchild)")
	badSchema := flag.Bool("bad-schema", false, "add a tool whose schema does not compile")
	cancelFile := flag.String("cancel-file", "", "written when a hang call is cancelled")
	flag.Parse()

	switch {
	case *sleeper:
		signal.Ignore(syscall.SIGTERM)
		select {}
	case *exitAtStart != "":
		f, err := os.OpenFile(*exitAtStart, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintln(f, os.Getpid(), time.Now().UnixNano())
			f.Close()
		}
		fmt.Fprintln(os.Stderr, "testserver: exiting at start as asked")
		os.Exit(1)
	case *grandchild != "":
		self, _ := os.Executable()
		cmd := exec.Command(self, "-sleeper")
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		tmp := *grandchild + ".tmp"
		_ = os.WriteFile(tmp, fmt.Appendf(nil, "%d %d", os.Getpid(), cmd.Process.Pid), 0o644)
		_ = os.Rename(tmp, *grandchild)
	}
	if *startLog != "" {
		start := time.Now()
		time.Sleep(*startDelay)
		f, err := os.OpenFile(*startLog, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintf(f, "%d %d %d\n", os.Getpid(), start.UnixNano(), time.Now().UnixNano())
			f.Close()
		}
	}
	s := fakeserver.New(fakeserver.Options{BadSchema: *badSchema, CancelFile: *cancelFile})
	if err := server.ServeStdio(s); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
