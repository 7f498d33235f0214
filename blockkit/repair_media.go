package blockkit

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/slack-go/slack"

	"github.com/slackbot/slackbot/blockkit/internal/jsonish"
)

// Step 3 of Repair, continued: images and videos.

// imageSource returns the image of an image block or element: an http(s)
// URL, also under the names models use for it, or a Slack file.
func (r *repairer) imageSource(n *jsonish.Value, path string) (url string, file *slack.SlackFileObject) {
	if sf := n.Get("slack_file"); sf != nil && sf.Kind == jsonish.Object {
		if u := sf.GetString("url"); isWebURL(u) {
			return "", &slack.SlackFileObject{URL: u}
		}
		if id := sf.GetString("id"); id != "" {
			return "", &slack.SlackFileObject{ID: id}
		}
	}
	for _, k := range []string{"image_url", "url", "src", "image"} {
		if u := strings.TrimSpace(n.GetString(k)); isWebURL(u) {
			if k != "image_url" {
				r.note(join(path, k), "shape_coerced", k+" read as image_url")
			}
			return u, nil
		}
	}
	return "", nil
}

// altText returns the alt text of an image, adding one when it is missing.
// Alt text over Slack's limit is shortened on the image, and rest holds it
// whole, as mrkdwn, to show after the image.
func (r *repairer) altText(n *jsonish.Value, path string) (alt, rest string) {
	alt = strings.TrimSpace(n.GetString("alt_text"))
	if alt == "" {
		if alt = strings.TrimSpace(n.GetString("alt")); alt != "" {
			r.note(join(path, "alt"), "shape_coerced", "alt read as alt_text")
		}
	}
	if alt == "" {
		alt = strings.TrimSpace(mrkdwnPlain(readable(n.Get("title"))))
		if alt == "" {
			alt = "image"
		}
		r.note(join(path, "alt_text"), "alt_text_added", "missing alt_text set to "+strconv.Quote(alt))
	}
	if short, cut := clampText(alt, altTextMax, false); cut {
		r.note(join(path, "alt_text"), "alt_text_moved", fmt.Sprintf("alt_text over %d characters shortened on the image, shown whole after it", altTextMax))
		return short, mrkdwnEscaper.Replace(alt)
	}
	return alt, ""
}

// imageElement rebuilds an image element, or returns nil when it has no
// usable image; rest is alt text to show after it (see altText).
func (r *repairer) imageElement(n *jsonish.Value, path string) (el *slack.ImageBlockElement, rest string) {
	url, file := r.imageSource(n, path)
	if url == "" && file == nil {
		return nil, ""
	}
	alt, rest := r.altText(n, path)
	el = &slack.ImageBlockElement{Type: slack.METImage, AltText: alt, SlackFile: file}
	if url != "" {
		el.ImageURL = &url
	}
	return el, rest
}

// image rebuilds an image block; one without a usable URL becomes text
// that links to it.
func (r *repairer) image(n *jsonish.Value, path, id string) []slack.Block {
	url, file := r.imageSource(n, path)
	if url == "" && file == nil {
		return r.convert(n, path, "image without a usable image_url (http or https, at most 3000 characters)")
	}
	alt, rest := r.altText(n, path)
	b := &slack.ImageBlock{Type: slack.MBTImage, ImageURL: url, SlackFile: file, AltText: alt, BlockID: id}
	if t := r.textObject(n.Get("title"), join(path, "title"), slack.PlainTextType); t != nil {
		if Len(t.Text) > imageTitleMax {
			return r.convert(n, path, fmt.Sprintf("image title over %d characters", imageTitleMax))
		}
		b.Title = t
	}
	out := []slack.Block{b}
	if rest != "" {
		out = append(out, r.sections(&slack.TextBlockObject{Type: slack.MarkdownType, Text: rest}, "", join(path, "alt_text"))...)
	}
	return out
}

// video rebuilds a video block, which Slack accepts only with a title, an
// https video URL, an http(s) thumbnail URL and alt text; without them it
// becomes text that links to the video. A title link Slack would refuse
// (not https) is shown after the video.
func (r *repairer) video(n *jsonish.Value, path, id string) []slack.Block {
	videoURL := strings.TrimSpace(n.GetString("video_url"))
	thumb := strings.TrimSpace(n.GetString("thumbnail_url"))
	title := r.textObject(n.Get("title"), join(path, "title"), slack.PlainTextType)
	desc := r.textObject(n.Get("description"), join(path, "description"), slack.PlainTextType)
	author := strings.TrimSpace(n.GetString("author_name"))
	switch {
	case !isHTTPSURL(videoURL) || !isWebURL(thumb) || title == nil:
		return r.convert(n, path, "video without a title, an https video_url or an http(s) thumbnail_url")
	case Len(title.Text) > videoTitleMax || desc != nil && Len(desc.Text) > videoDescMax || Len(author) > videoAuthorMax:
		return r.convert(n, path, "video title, description or author over Slack's length")
	}
	alt := strings.TrimSpace(n.GetString("alt_text"))
	if alt == "" {
		alt = title.Text
		r.note(join(path, "alt_text"), "alt_text_added", "missing alt_text set to the title")
	}
	v := &slack.VideoBlock{Type: slack.MBTVideo, BlockID: id, VideoURL: videoURL, ThumbnailURL: thumb,
		AltText: alt, Title: title, Description: desc, AuthorName: author,
		ProviderName: n.GetString("provider_name")}
	out := []slack.Block{v}
	switch u := strings.TrimSpace(n.GetString("title_url")); {
	case isHTTPSURL(u):
		v.TitleURL = u
	case isWebURL(u):
		r.note(join(path, "title_url"), "element_fixed", "title_url that is not https shown as a link after the video")
		out = append(out, r.textSections(slackLink(u, title.Text), join(path, "title_url"))...)
	}
	if u := n.GetString("provider_icon_url"); isWebURL(u) {
		v.ProviderIconURL = u
	}
	return out
}

// isHTTPSURL reports whether u is a web URL Slack takes (see isWebURL)
// that is https, as a video and its title link must be.
func isHTTPSURL(u string) bool {
	return isWebURL(u) && strings.HasPrefix(u, "https://")
}
