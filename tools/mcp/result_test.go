package mcp

import (
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

func TestResultsRenderAsTextTheModelCanUse(t *testing.T) {
	t.Parallel()
	png := strings.Repeat("iVBORw0K", 200) // 1,600 base64 chars = 1,200 bytes
	cases := []struct {
		name string
		in   *mcp.CallToolResult
		want string
		err  bool
	}{
		{"text parts are joined with newlines",
			&mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("a"), mcp.NewTextContent("b")}}, "a\nb", false},
		{"isError keeps its text",
			&mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("bad input")}, IsError: true}, "bad input", true},
		{"an image is described, never inlined",
			&mcp.CallToolResult{Content: []mcp.Content{mcp.NewImageContent(png, "image/png")}}, "[image: image/png, 1,200 bytes]", false},
		{"audio is described",
			&mcp.CallToolResult{Content: []mcp.Content{mcp.NewAudioContent("AAAA", "audio/wav")}}, "[audio: audio/wav, 3 bytes]", false},
		{"a resource link is a readable line",
			&mcp.CallToolResult{Content: []mcp.Content{mcp.NewResourceLink("file:///r/1", "one", "first", "text/plain")}},
			"[resource link: one, file:///r/1, text/plain: first]", false},
		{"an embedded text resource is its text",
			&mcp.CallToolResult{Content: []mcp.Content{mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "x://1", Text: "inside"})}}, "inside", false},
		{"structured content already in the text is not repeated",
			&mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(`{ "b": 2, "a": 1 }`)}, StructuredContent: map[string]any{"a": 1, "b": 2}},
			`{ "b": 2, "a": 1 }`, false},
		{"structured content alone becomes JSON",
			&mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("weather:")}, StructuredContent: map[string]any{"t": 21}},
			"weather:\n{\"t\":21}", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := render(c.in)
			if got.Content != c.want || got.IsError != c.err {
				t.Errorf("render = %q (isError %v), want %q (%v)", got.Content, got.IsError, c.want, c.err)
			}
		})
	}
}
