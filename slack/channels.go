package slack

import (
	"context"
	"path"
	"strings"
	"sync"
	"time"

	slackapi "github.com/slack-go/slack"
	"go.uber.org/zap"

	"github.com/slackbot/slackbot/config"
)

// Channels are matched by id. Anyone can create or rename a channel, so a
// rule given by name is only as good as the directory that turns names
// into ids: it is read from conversations.list at start and every
// channelRefresh, kept current by channel_created, channel_rename and
// group_rename, and completed by conversations.info for a channel it does
// not hold. A channel that none of these can name (a private channel the
// bot is not in) matches no rule by name, and is denied while any deny
// rule is by name.

// channelRefresh is how often the directory is read again unless
// Options.ChannelRefresh says otherwise; what it held before is forgotten
// then, so a name it learned expires.
const channelRefresh = 30 * time.Minute

// channelLookupTimeout bounds the conversations.info call for a channel the
// directory does not hold.
const channelLookupTimeout = 3 * time.Second

// channelTypes are the conversations the directory lists.
var channelTypes = []string{"public_channel", "private_channel", "mpim"}

// directory maps channel ids to their current names.
type directory struct {
	mu    sync.Mutex
	names map[string]string // id → name
	// During a refresh, the names events taught, applied over the new list.
	loading bool
	recent  map[string]string
}

// set records a channel's name (an event, a lookup).
func (d *directory) set(id, name string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.names == nil {
		d.names = map[string]string{}
	}
	d.names[id] = name
	if d.loading {
		if d.recent == nil {
			d.recent = map[string]string{}
		}
		d.recent[id] = name
	}
}

// name is a channel's name and whether the directory holds it.
func (d *directory) name(id string) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	n, ok := d.names[id]
	return n, ok
}

// begin marks the start of a refresh.
func (d *directory) begin() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.loading, d.recent = true, nil
}

// replace ends a refresh: names becomes the directory, with what events
// taught meanwhile on top. A failed refresh (names nil) keeps the old one.
func (d *directory) replace(names map[string]string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if names != nil {
		for id, n := range d.recent {
			names[id] = n
		}
		d.names = names
	}
	d.loading, d.recent = false, nil
}

// keepChannels reads the directory at once and every b.refreshChannels
// until ctx ends.
func (b *Bot) keepChannels(ctx context.Context) {
	t := time.NewTicker(b.refreshChannels)
	defer t.Stop()
	for {
		b.channels.begin()
		names, err := b.listChannels(ctx, channelTypes)
		if err != nil && isSlackErr(err, "missing_scope") {
			// An app without groups:read or mpim:read still lists the
			// public channels.
			names, err = b.listChannels(ctx, channelTypes[:1])
		}
		b.channels.replace(names)
		if err != nil && ctx.Err() == nil {
			b.log.Warn("channel names could not be read; rules by name match only channels already known", zap.Error(slackError(err)))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// listChannels reads every channel of types the bot can see, page by page.
func (b *Bot) listChannels(ctx context.Context, types []string) (map[string]string, error) {
	names := map[string]string{}
	cursor := ""
	for {
		var page []slackapi.Channel
		var next string
		err := withRetry(ctx, func() error {
			var err error
			page, next, err = b.api.GetConversationsContext(ctx, &slackapi.GetConversationsParameters{
				Types: types, Cursor: cursor, Limit: 1000, ExcludeArchived: true})
			return err
		})
		if err != nil {
			return nil, err
		}
		for _, c := range page {
			if c.Name != "" {
				names[c.ID] = c.Name
			}
		}
		if next == "" {
			return names, nil
		}
		cursor = next
	}
}

// channelName is a channel's name, and whether it is known: the directory,
// else conversations.info (remembered until the next refresh). A lookup
// that fails is not remembered, so the next request asks again. A direct
// message has no name, and is known.
func (b *Bot) channelName(ctx context.Context, id string) (string, bool) {
	if strings.HasPrefix(id, "D") {
		return "", true
	}
	if n, ok := b.channels.name(id); ok {
		return n, true
	}
	lctx, cancel := context.WithTimeout(ctx, channelLookupTimeout)
	defer cancel()
	info, err := b.api.GetConversationInfoContext(lctx, &slackapi.GetConversationInfoInput{ChannelID: id})
	if err != nil {
		b.log.Info("channel name unknown", zap.String("channel", id), zap.Error(slackError(err)))
		return "", false
	}
	if info.IsIM {
		return "", true
	}
	b.channels.set(id, info.Name)
	return info.Name, true
}

// byName reports whether any of the patterns names channels by name.
func byName(patterns []string) bool {
	for _, p := range patterns {
		if !config.IsChannelID(p) {
			return true
		}
	}
	return false
}

// matchChannel reports whether a channel, by id or by its current name
// ("" when unknown), matches one of the patterns ("C0123", "support-*",
// "#support-*").
func matchChannel(patterns []string, id, name string) bool {
	for _, p := range patterns {
		p = strings.TrimPrefix(p, "#")
		if p == id {
			return true
		}
		if name != "" && !config.IsChannelID(p) {
			if ok, _ := path.Match(p, name); ok {
				return true
			}
		}
	}
	return false
}
