package state

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestDialRedisAloneKeepsGoRedisQuiet dials a Redis that refuses
// connections in a process of its own, where nothing else has set go-redis's
// logger, and checks that go-redis printed no line of its own: it names the
// host at every failed dial.
func TestDialRedisAloneKeepsGoRedisQuiet(t *testing.T) {
	t.Parallel()
	if addr := os.Getenv("STATE_QUIET_DIAL"); addr != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if s, err := DialRedis(ctx, "redis://"+addr+"/0", "quiet:"); err == nil {
			_ = s.Close()
		}
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close() // nothing listens there now: every dial is refused
	cmd := exec.Command(os.Args[0], "-test.run=^TestDialRedisAloneKeepsGoRedisQuiet$", "-test.count=1")
	cmd.Env = append(os.Environ(), "STATE_QUIET_DIAL="+addr)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the dialing process failed: %v\n%s", err, stderr.String())
	}
	if strings.Contains(stderr.String(), "redis:") || strings.Contains(stderr.String(), addr) {
		t.Fatalf("go-redis logged on its own:\n%s", stderr.String())
	}
}
