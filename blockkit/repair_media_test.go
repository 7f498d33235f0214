package blockkit

import (
	"testing"

	"github.com/slack-go/slack"
)

func TestRepairKeepsAVideoOnlyWithAnHTTPSVideoURL(t *testing.T) {
	t.Parallel()
	video := func(videoURL, titleURL string) string {
		v := `{"type":"video","alt_text":"Recording of the review","title":{"type":"plain_text","text":"Incident review"},` +
			`"video_url":"` + videoURL + `","thumbnail_url":"http://i.example.com/t.jpg"`
		if titleURL != "" {
			v += `,"title_url":"` + titleURL + `"`
		}
		return `[{"blocks":[` + v + `}]}]`
	}
	runRepairTests(t, []repairTest{
		{name: "a video with an http video_url becomes text that links to it",
			messages: video("http://videos.example.com/embed/1", ""),
			has:      []string{"videos.example.com/embed/1", "Incident review", "Recording of the review"},
			kinds:    []string{"block_converted"}, check: wantTypes("section")},
		{name: "a video with an https video_url is kept, its http thumbnail too",
			messages: video("https://videos.example.com/embed/1", "https://videos.example.com/watch/1"),
			check: func(t *testing.T, msgs []Message) {
				v, ok := msgs[0].Blocks[0].(*slack.VideoBlock)
				if !ok || len(msgs[0].Blocks) != 1 || v.TitleURL != "https://videos.example.com/watch/1" {
					t.Errorf("blocks %q, want the video with its title_url", blockTypesOf(msgs))
				}
			}},
		{name: "a video's http title_url is dropped from the video and shown as a link after it",
			messages: video("https://videos.example.com/embed/1", "http://videos.example.com/watch/1"),
			has:      []string{"<http://videos.example.com/watch/1|Incident review>"},
			kinds:    []string{"element_fixed"},
			check: func(t *testing.T, msgs []Message) {
				wantTypes("video section")(t, msgs)
				if v, ok := msgs[0].Blocks[0].(*slack.VideoBlock); !ok || v.TitleURL != "" {
					t.Errorf("first block %#v, want a video without title_url", msgs[0].Blocks[0])
				}
			}},
	})
}
