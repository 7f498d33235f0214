package attach_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/slackbot/slackbot/attach"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/anthropic"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/llm/openai"
)

// ask sends a question with files, made into a turn by Prepare, to model
// through the real adapter of format, and returns the user message as the
// fake server recorded it from the wire.
func ask(t *testing.T, format, model string, files []attach.File, o attach.Options) llm.Message {
	t.Helper()
	srv := llmtest.NewServer(t, llmtest.Reply{Text: "seen"})
	cfg := config.Provider{Type: format, APIKey: "sk-test-key", BaseURL: srv.URL()}
	var p llm.Provider
	var err error
	if format == "openai" {
		cfg.BaseURL += "/v1"
		p, err = openai.New("oai", cfg)
	} else {
		p, err = anthropic.New("claude", cfg)
	}
	if err != nil {
		t.Fatal(err)
	}
	if o.Budget == 0 {
		o.Budget = 100_000
	}
	c := attach.Prepare(files, o)
	msg := llm.Message{Role: llm.RoleUser, Content: "What do these show?\n\n" + c.Text, Images: c.Images}
	if _, err := p.Complete(context.Background(), &llm.Request{Model: model, Messages: []llm.Message{msg}}); err != nil {
		t.Fatalf("%s refused the turn: %v", format, err)
	}
	rec := srv.Last()
	if len(rec.Messages) != 1 {
		t.Fatalf("recorded %d messages, want the one user turn", len(rec.Messages))
	}
	return rec.Messages[0]
}

func TestAnAttachedPNGReachesBothWiresAsAnImage(t *testing.T) {
	t.Parallel()
	png := pngOf(t, 640, 480)
	for _, tt := range []struct{ format, model, wire string }{
		{"openai", "gpt-4o", `"type":"image_url"`},
		{"anthropic", "claude-sonnet-4-5", `"type":"image"`},
	} {
		t.Run(tt.format, func(t *testing.T) {
			t.Parallel()
			got := ask(t, tt.format, tt.model, []attach.File{{Name: "error.png", Type: "image/png", Data: png}}, attach.Options{})
			if len(got.Images) != 1 || got.Images[0].MediaType != "image/png" || !bytes.Equal(got.Images[0].Data, png) {
				t.Fatalf("images on the wire: %d, want the PNG as it was", len(got.Images))
			}
			if !strings.Contains(got.Content, "Attached file error.png: image/png") || !strings.Contains(got.Content, "shown below as an image") {
				t.Fatalf("the turn does not announce the picture: %q", got.Content)
			}
		})
	}
}

func TestAModelWithoutVisionGetsTheNoteInsteadOfTheAttachedPicture(t *testing.T) {
	t.Parallel()
	got := ask(t, "openai", "llama3.1:8b", []attach.File{{Name: "error.png", Data: pngOf(t, 64, 64)}}, attach.Options{})
	if len(got.Images) != 0 || !strings.Contains(got.Content, "The user attached an image you cannot see: error.png") {
		t.Fatalf("recorded %d images and %q; want none and the note", len(got.Images), got.Content)
	}
}

func TestASixThousandPixelPictureReachesAnthropicScaledWithinItsLimits(t *testing.T) {
	t.Parallel()
	got := ask(t, "anthropic", "claude-sonnet-4-5", []attach.File{{Name: "wall.png", Data: pngOf(t, 6000, 6000)}}, attach.Options{})
	if len(got.Images) != 1 {
		t.Fatalf("recorded %d images", len(got.Images))
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(got.Images[0].Data))
	if err != nil || cfg.Width != 1568 || cfg.Height != 1568 {
		t.Fatalf("the picture on the wire is %d×%d (%v), want 1568×1568", cfg.Width, cfg.Height, err)
	}
	if !strings.Contains(got.Content, "6000×6000 pixels, scaled to 1568×1568") {
		t.Fatalf("the turn does not say the picture was scaled: %q", got.Content)
	}
}

func TestTextsPDFsAndOtherFilesReachTheModelAsText(t *testing.T) {
	t.Parallel()
	files := []attach.File{
		{Name: "deploy.yaml", Data: []byte("replicas: 3\nimage: api:1.4.2\n")},
		{Name: "spec.pdf", Type: "application/pdf", Data: buildPDF("The API must answer within 200 ms")},
		{Name: "scan.pdf", Type: "application/pdf", Data: buildPDF("")},
		{Name: "backup.bin", Type: "application/x-tar", Data: []byte{0, 1, 2, 3, 0, 5}},
	}
	got := ask(t, "anthropic", "claude-sonnet-4-5", files, attach.Options{})
	for _, want := range []string{
		"[Attached file deploy.yaml: application/yaml, 29 bytes]\nreplicas: 3\nimage: api:1.4.2\n\n[End of deploy.yaml]",
		"[Attached file spec.pdf: application/pdf", "its text extracted]", "The API must answer within 200 ms",
		"[Attached file scan.pdf: application/pdf, ", "no text layer (it may be a scan)",
		"[Attached file backup.bin: application/x-tar, 6 bytes — its content is not shown",
	} {
		if !strings.Contains(got.Content, want) {
			t.Errorf("the turn lacks %q:\n%s", want, got.Content)
		}
	}
}

func TestATextOverTheBudgetIsCutNotDroppedWithoutAStore(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&b, "line %d of the export\n", i)
	}
	got := ask(t, "openai", "gpt-4o", []attach.File{{Name: "export.csv", Data: []byte(b.String())}}, attach.Options{Budget: 2000})
	if !strings.Contains(got.Content, "line 0 of the export") || !strings.Contains(got.Content, "line 4999 of the export") ||
		!strings.Contains(got.Content, "bytes in the middle left out") || len(got.Content) > 10000 {
		t.Fatalf("want the start, the end and a note of what was left out, within the budget; got %d bytes", len(got.Content))
	}
}

func TestNoFileContentOrNameReachesTheLogs(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zapcore.DebugLevel)
	files := []attach.File{
		{ID: "F1", Name: "salaries-2026.csv", Data: []byte("name,salary\nalice,SECRET-ROW-123\n")},
		{ID: "F2", Name: "board-deck.pdf", Data: buildPDF("CONFIDENTIAL-PDF-LINE")},
		{ID: "F3", Name: "id-card.png", Data: pngOf(t, 32, 32)},
		{ID: "F4", Name: "keys.bin", Data: []byte("\x00xoxb-123-456-SECRET")},
	}
	attach.Prepare(files, attach.Options{Budget: 100_000, Log: zap.New(core)})
	if logs.Len() != len(files) {
		t.Fatalf("%d log lines, want one per file", logs.Len())
	}
	for _, e := range logs.All() {
		line := e.Message + fmt.Sprint(e.ContextMap())
		for _, secret := range []string{"SECRET", "CONFIDENTIAL", "salaries", "board-deck", "id-card", "keys.bin", "alice"} {
			if strings.Contains(line, secret) {
				t.Errorf("a log line carries %q: %s", secret, line)
			}
		}
		m := e.ContextMap()
		if m["bytes"] == nil || m["kind"] == nil || m["media_type"] == nil {
			t.Errorf("a log line lacks the size, kind or type: %s", line)
		}
	}
}
