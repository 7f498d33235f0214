package openai_test

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

func pngBytes(t *testing.T) []byte { return testdoc.PNG(t, testdoc.Grey(4, 3)) }

func imageRequest(t *testing.T, stream bool) (*llm.Request, []byte) {
	data := pngBytes(t)
	return &llm.Request{Model: testModel, Stream: stream, Messages: []llm.Message{
		{Role: llm.RoleUser, Content: "What is on this screenshot?", Images: []llm.Image{{Name: "error.png", MediaType: "image/png", Width: 4, Height: 3, Data: data}}},
	}}, data
}

func TestAPNGReachesAVisionModelAsAnImageURLPartWithADataURI(t *testing.T) {
	t.Parallel()
	modes(t, func(t *testing.T, stream bool) {
		srv := llmtest.NewServer(t, llmtest.Reply{Text: "a red dot", Usage: &llmtest.Usage{Input: 1105, Output: 4}})
		vision := true
		p := newProvider(t, srv, func(c *config.Provider) { c.Models = map[string]config.Model{testModel: {Input: 2.5, Vision: &vision}} })
		req, data := imageRequest(t, stream)
		resp, err := p.Complete(context.Background(), req)
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
		if !bytes.Contains(rec.Body, []byte(`"type":"image_url"`)) || !bytes.Contains(rec.Body, []byte("data:image/png;base64,")) {
			t.Errorf("the wire does not carry an image_url part with a data: URI: %.300s", rec.Body)
		}
		// Image tokens are part of the prompt the provider reports.
		if resp.Usage.InputTokens != 1105 {
			t.Errorf("input tokens = %d, want the 1105 the provider reported", resp.Usage.InputTokens)
		}
	})
}

func TestAModelWithoutVisionGetsANoteNamingTheFileInsteadOfTheImage(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Text: "I cannot see it"})
	p := newProvider(t, srv, func(c *config.Provider) { c.Models = nil }) // gpt-test: not a known vision family
	req, _ := imageRequest(t, false)
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	rec := srv.Last()
	if len(rec.Messages[0].Images) != 0 || bytes.Contains(rec.Body, []byte("image_url")) {
		t.Fatalf("a model without vision was sent the image: %.300s", rec.Body)
	}
	if got := rec.Messages[0].Content; !strings.Contains(got, "What is on this screenshot?") || !strings.Contains(got, "attached an image you cannot see: error.png") {
		t.Fatalf("user message = %q, want the question and the note naming error.png", got)
	}
}

func TestAnImageThatIsNotWhatItsMediaTypeSaysIsRefusedAsTheServiceWould(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Text: "never"})
	p := newProvider(t, srv, func(c *config.Provider) { c.Models = nil })
	req := &llm.Request{Model: "gpt-4o", Messages: []llm.Message{{Role: llm.RoleUser, Content: "look",
		Images: []llm.Image{{Name: "x.png", MediaType: "image/png", Data: []byte("not a png")}}}}}
	_, err := p.Complete(context.Background(), req)
	if llm.KindOf(err) != llm.ErrBadRequest || !strings.Contains(err.Error(), "unsupported image") {
		t.Fatalf("err = %v, want a bad request about an unsupported image", err)
	}
}
