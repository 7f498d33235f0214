package anthropic_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/internal/testdoc"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/llmtest"
)

func pngBytes(t *testing.T, w, h int) []byte { return testdoc.PNG(t, testdoc.Grey(w, h)) }

func imageRequest(model string, stream bool, data []byte) *llm.Request {
	return &llm.Request{Model: model, Stream: stream, Messages: []llm.Message{
		{Role: llm.RoleUser, Content: "What is on this screenshot?", Images: []llm.Image{{Name: "error.png", MediaType: "image/png", Data: data}}},
	}}
}

func TestAPNGReachesAClaudeModelAsABase64ImageBlock(t *testing.T) {
	t.Parallel()
	modes(t, func(t *testing.T, stream bool) {
		srv := llmtest.NewServer(t, llmtest.Reply{Text: "a dot", Usage: &llmtest.Usage{Input: 1590, Output: 3}})
		p := newProvider(t, srv.URL())
		data := pngBytes(t, 4, 3)
		resp, err := p.Complete(context.Background(), imageRequest("claude-sonnet-4-5", stream, data))
		if err != nil {
			t.Fatalf("Complete: %v", err)
		}
		rec := srv.Last()
		if len(rec.Messages) != 1 || rec.Messages[0].Content != "What is on this screenshot?" {
			t.Fatalf("recorded messages = %+v", rec.Messages)
		}
		imgs := rec.Messages[0].Images
		if len(imgs) != 1 || imgs[0].MediaType != "image/png" || !bytes.Equal(imgs[0].Data, data) {
			t.Fatalf("recorded images = %+v, want the PNG's bytes as image/png", imgs)
		}
		if !bytes.Contains(rec.Body, []byte(`"type":"image"`)) || !bytes.Contains(rec.Body, []byte(`"type":"base64"`)) {
			t.Errorf("the wire does not carry an image block with a base64 source: %.300s", rec.Body)
		}
		if resp.Usage.InputTokens != 1590 {
			t.Errorf("input tokens = %d, want the 1590 the provider reported, image included", resp.Usage.InputTokens)
		}
	})
}

func TestAClaudeModelConfiguredWithoutVisionGetsTheNote(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Text: "cannot see"})
	off := false
	p := newProvider(t, srv.URL(), func(c *config.Provider) { c.Models = map[string]config.Model{"claude-sonnet-4-5": {Vision: &off}} })
	if _, err := p.Complete(context.Background(), imageRequest("claude-sonnet-4-5", false, pngBytes(t, 4, 3))); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	rec := srv.Last()
	if len(rec.Messages[0].Images) != 0 || !strings.Contains(rec.Messages[0].Content, "cannot see: error.png") {
		t.Fatalf("recorded = %+v, want no image and the note naming error.png", rec.Messages[0])
	}
}

func TestAnImageOverTheServicesPixelLimitIsRefusedAsTheServiceWould(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Text: "never"})
	p := newProvider(t, srv.URL())
	_, err := p.Complete(context.Background(), imageRequest("claude-sonnet-4-5", false, pngBytes(t, 8001, 2)))
	if llm.KindOf(err) != llm.ErrBadRequest || !strings.Contains(err.Error(), "8000 pixels") {
		t.Fatalf("err = %v, want a bad request about the 8000-pixel limit", err)
	}
}
