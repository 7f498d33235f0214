package slack

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf16"

	slackapi "github.com/slack-go/slack"
	"go.uber.org/zap"

	"github.com/slackbot/slackbot/attach"
	"github.com/slackbot/slackbot/blockkit"
	"github.com/slackbot/slackbot/config"
)

// Files people attach to the message that starts a session (a file_share
// message, a mention, a DM, a thread follow-up) are read for the session:
// at most slack.files.max_count of them, none over slack.files.max_bytes,
// downloaded with the bot token from Slack's file host only (attach.Fetcher
// refuses any other host, redirects included). The person is told once, in
// the thread, which files were not read and why, and that the model cannot
// see pictures when it cannot. Logs say how many files, their sizes and
// kinds; never a name or a byte of content.

// newFetcher is the bot's downloader of attached files.
func newFetcher(cfg config.Slack) *attach.Fetcher {
	return &attach.Fetcher{Token: cfg.BotToken.Reveal(), Hosts: fileHosts(cfg), MaxBytes: fileMaxBytes(cfg)}
}

// fileHosts are the hosts the bot token may be sent to for a download:
// slack.files.hosts, or, in a configuration built without Load's
// defaults, Slack's file host and the api_url's host.
func fileHosts(cfg config.Slack) []string {
	if len(cfg.Files.Hosts) > 0 {
		return cfg.Files.Hosts
	}
	hosts := []string{config.DefaultFileHost}
	if u, err := url.Parse(cfg.APIURL); err == nil && u.Hostname() != "" && u.Hostname() != "slack.com" {
		hosts = append(hosts, strings.ToLower(u.Hostname()))
	}
	return hosts
}

func fileMaxBytes(cfg config.Slack) int64 {
	if cfg.Files.MaxBytes > 0 {
		return cfg.Files.MaxBytes
	}
	return config.DefaultFileMaxBytes
}

func fileMaxCount(cfg config.Slack) int {
	if cfg.Files.MaxCount > 0 {
		return cfg.Files.MaxCount
	}
	return config.DefaultFileMaxCount
}

// attachedFile is a file of the question as the event described it.
type attachedFile struct {
	attach.File
	url      string // url_private_download
	external bool   // a link to another service: nothing to download from Slack
	hidden   bool   // hidden by the workspace's plan (older than its history limit)
}

// filesOf keeps what the headend needs of a message's files[].
func filesOf(files []slackapi.File) []attachedFile {
	out := make([]attachedFile, 0, len(files))
	for _, f := range files {
		if f.ID == "" || f.Mode == "tombstone" {
			continue // deleted since
		}
		out = append(out, attachedFile{
			File: attach.File{ID: f.ID, Name: f.Name, Type: f.Mimetype, Size: int64(f.Size)},
			url:  f.URLPrivateDownload, external: f.IsExternal || f.Mode == "external", hidden: f.Mode == "hidden_by_limit",
		})
	}
	return out
}

// attachments downloads the question's files for the session and tells
// the person, once, about those it could not read.
func (r *run) attachments(ctx context.Context, log *zap.Logger) []attach.File {
	if len(r.req.files) == 0 {
		return nil
	}
	b := r.b
	byID := map[string]attachedFile{}
	described := make([]attach.File, 0, len(r.req.files))
	for _, f := range r.req.files {
		byID[f.ID] = f
		described = append(described, f.File)
	}
	read, skipped := attach.Admit(described, fileMaxBytes(b.cfg), fileMaxCount(b.cfg))
	// The downloads share half of what is left of the session's clock, so
	// that a file host that dribbles or stalls leaves the session time to
	// answer, and the note below time to be posted.
	dctx := ctx
	if deadline, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		dctx, cancel = context.WithDeadline(ctx, time.Now().Add(time.Until(deadline)/2))
		defer cancel()
	}
	var got []attach.File
	images := 0
	for _, f := range read {
		af := byID[f.ID]
		data, why := r.download(dctx, af)
		if why != "" {
			skipped = append(skipped, attach.Skipped{File: f, Reason: why})
			continue
		}
		f.Data = data
		if k, _ := attach.Sniff(f.Name, f.Type, data); k == attach.KindImage {
			images++
		}
		got = append(got, f)
	}
	for _, s := range skipped {
		log.Info("attached file not read", zap.String("file", s.File.ID), zap.Int64("bytes", s.File.Size))
	}
	log.Info("attached files", zap.Int("attached", len(r.req.files)), zap.Int("read", len(got)), zap.Int("images", images))
	blind := images > 0 && !r.sees()
	if len(skipped) > 0 || blind {
		m := noteMessage(fileNote(skipped, blind))
		// The session's clock may be spent by now (by downloads that never
		// ended): the note still goes, on a clock of its own.
		nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), noteTimeout)
		defer cancel()
		if _, err := b.send(nctx, r.req.channel, r.req.threadTS, "", m); err != nil {
			log.Warn("the note on attached files could not be posted", zap.Error(slackError(err)))
		}
	}
	return got
}

// download fetches one file, or says in a sentence for the person why it
// was not read.
func (r *run) download(ctx context.Context, f attachedFile) ([]byte, string) {
	name := attach.DisplayName(f.Name)
	if f.hidden {
		return nil, name + " was not read: the workspace's plan hides it from apps."
	}
	if f.external || f.url == "" {
		return nil, name + " was not read: it is a link to another service, not a file in Slack."
	}
	data, err := r.b.fetcher.Fetch(ctx, f.url)
	switch {
	case err == nil:
		return data, ""
	case errors.Is(err, attach.ErrTooLarge):
		return nil, attach.TooLargeReason(f.Name, 0, fileMaxBytes(r.b.cfg))
	case errors.Is(err, attach.ErrHostNotAllowed):
		return nil, name + " was not read: it is not on Slack's file host, and I send my token nowhere else."
	case errors.Is(err, attach.ErrSignIn):
		return nil, name + " was not read: Slack would not let me download it (the app may lack the files:read scope)."
	}
	return nil, name + " was not read: the download failed."
}

// sees reports whether the model the session starts with reads pictures.
func (r *run) sees() bool {
	if len(r.agent.Models) == 0 {
		return false
	}
	prov, model, err := config.ParseModelRef(r.agent.Models[0])
	if err != nil {
		return false
	}
	return r.b.conf.LLM.Providers[prov].Vision(model)
}

// noVisionNote is what the person is told when the model cannot see the
// pictures they attached.
const noVisionNote = "The model answering here cannot see images: it is told only that you attached one."

// noteTimeout bounds the posting of the note on attached files.
const noteTimeout = 10 * time.Second

// noteRoom is what the lines naming skipped files may take of the note's
// context block (blockkit.ContextTextMax UTF-16 units), leaving room for
// the heading, the line on pictures and the count of the rest.
const noteRoom = blockkit.ContextTextMax - 400

// fileNote is the note on files not read, one line each, in mrkdwn; past
// what one context block holds, the rest are counted, not named. The
// reasons name the files, which are untrusted: each name is shown as code,
// so that nothing in it pings, links or formats.
func fileNote(skipped []attach.Skipped, blind bool) string {
	var lines []string
	used := 0
	for i, s := range skipped {
		line := "• " + codeNames(s.Reason, s.File.Name)
		if used += len(utf16.Encode([]rune(line))) + 1; used > noteRoom {
			lines = append(lines, fmt.Sprintf("• %d more files were not read.", len(skipped)-i))
			break
		}
		lines = append(lines, line)
	}
	if blind {
		lines = append(lines, "• "+noVisionNote)
	}
	return "_Attached files:_\n" + strings.Join(lines, "\n")
}

// codeNames escapes reason for mrkdwn and puts the file's name in it
// between backticks.
func codeNames(reason, name string) string {
	shown := attach.DisplayName(name)
	before, after, found := strings.Cut(reason, shown)
	if !found {
		return escape(reason)
	}
	code := strings.ReplaceAll(escape(shown), "`", "ʼ")
	return escape(before) + "`" + code + "`" + escape(after)
}
