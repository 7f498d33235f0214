package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/slackbot/slackbot/config"
)

// Shutdown and connection bounds.
const (
	// killGrace is how long a stdio server has to exit on SIGTERM before
	// its group is killed.
	killGrace = 2 * time.Second
	// connectTimeout bounds initialize and the first tools/list: a server
	// started through npx may first download itself.
	connectTimeout = 60 * time.Second
	// probeTimeout bounds one health probe.
	probeTimeout = 10 * time.Second
)

// conn is one live connection to a server: for stdio, one process.
type conn struct {
	client       *client.Client
	instructions string
	remote       []mcp.Tool

	proc   *groupProc    // stdio only
	exited chan struct{} // stdio only: closed when the process has exited

	dead      chan struct{} // closed once the connection is known lost
	deadOnce  sync.Once
	deadCause error

	listChanged chan struct{} // a notifications/tools/list_changed arrived
	suspect     chan struct{} // a call failed in transport: probe at once

	closeOnce sync.Once
}

func newConn() *conn {
	return &conn{
		dead:        make(chan struct{}),
		exited:      make(chan struct{}),
		listChanged: make(chan struct{}, 1),
		suspect:     make(chan struct{}, 1),
	}
}

// markDead records why the connection was lost; the first cause wins.
func (c *conn) markDead(cause error) {
	c.deadOnce.Do(func() {
		c.deadCause = cause
		close(c.dead)
	})
}

func (c *conn) isDead() bool {
	select {
	case <-c.dead:
		return true
	default:
		return false
	}
}

// poke makes a non-blocking send on a one-slot signal channel.
func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// close ends the connection. A stdio server's whole process group is
// terminated: SIGTERM, then SIGKILL after killGrace.
func (c *conn) close() {
	c.closeOnce.Do(func() {
		c.markDead(errStopped)
		if c.proc == nil {
			if c.client != nil {
				_ = c.client.Close()
			}
			return
		}
		// Closing the client closes stdin and reaps the leader; signal the
		// group meanwhile so neither waits on the other.
		closed := make(chan struct{})
		go func() {
			defer close(closed)
			if c.client != nil {
				_ = c.client.Close()
			}
		}()
		c.proc.terminate(c.exited, killGrace)
		<-closed
	})
}

var errStopped = errors.New("stopped")

// errExited is the cause recorded when a stdio server's process exits.
var errExited = errors.New("the server process exited")

// connect starts the server (for stdio, its process), runs the MCP
// handshake and lists its tools. run bounds the connection's life: ending
// it kills what connect started.
func connect(run context.Context, name string, cfg config.MCPServer, opts ...client.ClientOption) (*conn, error) {
	c := newConn()
	var err error
	switch cfg.Transport() {
	case "stdio":
		err = c.startStdio(run, cfg, opts)
	case "http":
		err = c.startHTTP(run, cfg, opts)
	case "sse":
		err = c.startSSE(run, cfg, opts)
	default:
		err = fmt.Errorf("unknown transport %q", cfg.Transport())
	}
	if err != nil {
		c.close()
		return nil, err
	}
	c.client.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationToolsListChanged) {
			poke(c.listChanged)
		}
	})
	ctx, cancel := context.WithTimeout(run, connectTimeout)
	defer cancel()
	// A stdio server that exits during the handshake would leave it
	// waiting until connectTimeout; end it at once instead.
	go func() {
		select {
		case <-c.dead:
			cancel()
		case <-ctx.Done():
		}
	}()
	init, err := c.client.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ClientInfo: mcp.Implementation{Name: "slackbot", Version: "1"},
	}})
	if err == nil {
		c.instructions = init.Instructions
		c.remote, err = listTools(ctx, c.client)
	}
	if err != nil {
		if c.isDead() && c.deadCause != errStopped {
			err = fmt.Errorf("%w: %w", c.deadCause, err)
		}
		c.close()
		return nil, err
	}
	return c, nil
}

// listTools asks for the server's tools page by page over the client's
// transport rather than through the client's typed call: mcp-go's typed
// tool keeps only some schema keywords (type, properties, required, …) and
// would drop a top-level anyOf, oneOf or description, so the model would
// see a looser schema than the server wrote. Each tool keeps its
// inputSchema as sent, in RawInputSchema.
func listTools(ctx context.Context, cl *client.Client) ([]mcp.Tool, error) {
	var all []mcp.Tool
	seen := map[string]bool{}
	cursor := ""
	for page := 1; ; page++ {
		var params any
		if cursor != "" {
			params = map[string]any{"cursor": cursor}
		}
		resp, err := cl.GetTransport().SendRequest(ctx, transport.JSONRPCRequest{
			JSONRPC: mcp.JSONRPC_VERSION,
			// A string id cannot collide with the client's numbered requests.
			ID:     mcp.NewRequestId(fmt.Sprintf("slackbot-tools-list-%d", page)),
			Method: string(mcp.MethodToolsList),
			Params: params,
		})
		if err != nil {
			return nil, err
		}
		if resp.Error != nil {
			return nil, fmt.Errorf("tools/list: %s", resp.Error.Message)
		}
		var res struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(resp.Result, &res); err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		for _, raw := range res.Tools {
			var t mcp.Tool
			var schema struct {
				InputSchema json.RawMessage `json:"inputSchema"`
			}
			if err := json.Unmarshal(raw, &t); err != nil {
				return nil, fmt.Errorf("tools/list: %w", err)
			}
			if json.Unmarshal(raw, &schema) == nil && len(schema.InputSchema) > 0 && string(schema.InputSchema) != "null" {
				t.RawInputSchema = schema.InputSchema
			}
			all = append(all, t)
		}
		if res.NextCursor == "" || seen[res.NextCursor] {
			return all, nil
		}
		seen[res.NextCursor] = true
		cursor = res.NextCursor
	}
}

// clientOptions pin the initialize handshake: the stateless protocol core
// has no ping and delivers list_changed only on a subscription stream, and
// the servers in use today speak the handshake.
//
//lint:ignore SA1019 deliberate until servers deliver list_changed without the handshake.
var clientOptions = []client.ClientOption{client.WithLegacyProtocolOnly()}

func (c *conn) startStdio(run context.Context, cfg config.MCPServer, opts []client.ClientOption) error {
	env := serverEnv(os.Environ(), cfg)
	mkcmd := func(_ context.Context, command string, _ []string, args []string) (*exec.Cmd, error) {
		// Not CommandContext: the process must outlive the start call's
		// context and die only through close, which kills its group.
		cmd := exec.Command(command, args...)
		cmd.Env = env
		cmd.Dir = cfg.Cwd
		// A grandchild holding the stderr pipe must not keep Wait blocked.
		cmd.WaitDelay = killGrace
		isolate(cmd)
		c.proc = &groupProc{cmd: cmd}
		return cmd, nil
	}
	t := transport.NewStdioWithOptions(cfg.Command, nil, cfg.Args, transport.WithCommandFunc(mkcmd))
	if err := t.Start(run); err != nil {
		c.proc = nil // never started: nothing to kill
		return err
	}
	c.client = client.NewClient(t, append(opts, clientOptions...)...)
	if err := c.client.Start(run); err != nil {
		return err
	}
	if pid := c.proc.pid(); pid > 0 && canWaitExit {
		go func() {
			waitExit(pid)
			close(c.exited)
			c.markDead(errExited)
		}()
	}
	return nil
}

func headers(cfg config.MCPServer) map[string]string {
	h := make(map[string]string, len(cfg.Headers))
	for k, v := range cfg.Headers {
		h[k] = v.Reveal()
	}
	return h
}

func (c *conn) startHTTP(run context.Context, cfg config.MCPServer, opts []client.ClientOption) error {
	t, err := transport.NewStreamableHTTP(cfg.URL,
		transport.WithHTTPHeaders(headers(cfg)),
		// The standing GET stream is how list_changed reaches us between calls.
		//lint:ignore SA1019 the handshake protocol (see clientOptions) keeps the GET stream.
		transport.WithContinuousListening())
	if err != nil {
		return err
	}
	// An answer goes to the server's own URL only: a redirect would carry
	// its headers elsewhere.
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	answers := &longAnswers{url: cfg.URL, headers: headers(cfg), session: t.GetSessionId, client: noRedirect}
	c.client = client.NewClient(cancellingHTTP{t, answers}, append(opts, clientOptions...)...)
	return c.client.Start(run)
}

func (c *conn) startSSE(run context.Context, cfg config.MCPServer, opts []client.ClientOption) error {
	t, err := transport.NewSSE(cfg.URL, transport.WithHeaders(headers(cfg)))
	if err != nil {
		return err
	}
	c.client = client.NewClient(cancellingSSE{t}, append(opts, clientOptions...)...)
	// Answers arrive on the event stream: without it the server is gone.
	c.client.OnConnectionLost(func(err error) { c.markDead(err) })
	// The event stream lives as long as the context given to Start.
	return c.client.Start(run)
}
