// Package mcp offers the tools of Model Context Protocol servers to the
// orchestrator. A Registry runs one shared instance of each configured
// server (stdio, streamable HTTP or SSE), restarts it with backoff when it
// fails, and hands out reference-counted Providers whose tool lists follow
// the server as it connects, changes and dies.
//
// Lifecycle of a server: connecting → connected (tools published) → down
// (tools withdrawn, restart scheduled) → connecting … until the last handle
// is released or the registry closes. Restart waits follow Options.Backoff;
// a connection that stayed up for healthyAfter resets the sequence, so a
// server that crashes once a day restarts at once instead of after the
// longest wait.
package mcp
