package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/slackbot/slackbot/tools"
)

// render turns a tools/call result into the text the model reads. Binary
// content is described, never inlined: base64 costs tokens and tells a
// text model nothing.
func render(r *mcp.CallToolResult) tools.Result {
	parts := make([]string, 0, len(r.Content)+1)
	for _, c := range r.Content {
		if s := renderContent(c); s != "" {
			parts = append(parts, s)
		}
	}
	if s := structured(r, parts); s != "" {
		parts = append(parts, s)
	}
	return tools.Result{Content: strings.Join(parts, "\n"), IsError: r.IsError}
}

func renderContent(c mcp.Content) string {
	switch v := c.(type) {
	case mcp.TextContent:
		return v.Text
	case *mcp.TextContent:
		return v.Text
	case mcp.ImageContent:
		return describeBinary("image", v.MIMEType, v.Data)
	case *mcp.ImageContent:
		return describeBinary("image", v.MIMEType, v.Data)
	case mcp.AudioContent:
		return describeBinary("audio", v.MIMEType, v.Data)
	case *mcp.AudioContent:
		return describeBinary("audio", v.MIMEType, v.Data)
	case mcp.ResourceLink:
		return resourceLink(&v)
	case *mcp.ResourceLink:
		return resourceLink(v)
	case mcp.EmbeddedResource:
		return embedded(&v)
	case *mcp.EmbeddedResource:
		return embedded(v)
	}
	return ""
}

func resourceLink(l *mcp.ResourceLink) string {
	name := l.Name
	if l.Title != "" {
		name = l.Title
	}
	s := fmt.Sprintf("[resource link: %s, %s", name, l.URI)
	if l.MIMEType != "" {
		s += ", " + l.MIMEType
	}
	if l.Description != "" {
		s += ": " + l.Description
	}
	return s + "]"
}

func embedded(e *mcp.EmbeddedResource) string {
	switch r := e.Resource.(type) {
	case mcp.TextResourceContents:
		return r.Text
	case *mcp.TextResourceContents:
		return r.Text
	case mcp.BlobResourceContents:
		return describeResourceBlob(r.URI, r.MIMEType, r.Blob)
	case *mcp.BlobResourceContents:
		return describeResourceBlob(r.URI, r.MIMEType, r.Blob)
	}
	return ""
}

func describeResourceBlob(uri, mime, blob string) string {
	if mime == "" {
		mime = "application/octet-stream"
	}
	return fmt.Sprintf("[resource: %s, %s, %s bytes]", uri, mime, thousands(base64Len(blob)))
}

// describeBinary reads like "[image: image/png, 1,234 bytes]".
func describeBinary(kind, mime, data string) string {
	if mime == "" {
		mime = "unknown type"
	}
	return fmt.Sprintf("[%s: %s, %s bytes]", kind, mime, thousands(base64Len(data)))
}

// base64Len is the decoded size of standard base64 text, without decoding.
func base64Len(s string) int {
	s = strings.TrimRight(strings.TrimSpace(s), "=")
	return len(s) * 3 / 4
}

// thousands writes n with thousands separators ("1,234 bytes").
func thousands(n int) string { return english.Sprintf("%d", n) }

var english = message.NewPrinter(language.English)

// structured renders structuredContent as compact JSON, unless a text part
// already carries the same value: servers are asked to send both forms, and
// the model needs only one.
func structured(r *mcp.CallToolResult, texts []string) string {
	raw := []byte(r.RawStructuredContent)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		if r.StructuredContent == nil {
			return ""
		}
		var err error
		if raw, err = json.Marshal(r.StructuredContent); err != nil {
			return ""
		}
	}
	want, ok := canonical(raw)
	if !ok {
		return ""
	}
	for _, t := range texts {
		if got, ok := canonical([]byte(t)); ok && got == want {
			return ""
		}
	}
	return want
}

// canonical re-encodes a JSON document so that equal values compare equal
// whatever their spacing or key order.
func canonical(b []byte) (string, bool) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || (b[0] != '{' && b[0] != '[') {
		return "", false
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&v); err != nil || d.More() {
		return "", false
	}
	out, err := json.Marshal(v)
	if err != nil {
		return "", false
	}
	return string(out), true
}
