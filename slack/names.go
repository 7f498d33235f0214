package slack

import (
	"context"
	"errors"
	"time"

	"github.com/slackbot/slackbot/slack/ratelimit"
)

// Names in a thread's history — each person's, and the <@U…> mentions in
// what they wrote — are looked up with users.info as the history is read,
// newest message first, so only the messages the model will see cost a
// call. A session asks Slack about at most maxNameLookups people, each
// call bounded by nameLookupTimeout, and stops asking after one call ran
// out of time: a thread naming hundreds of people, or a users.info that
// hangs, cannot hold the session's start. A name not looked up is shown
// as the person's id. Names found are kept for the life of the process.
const (
	maxNameLookups    = 20
	nameLookupTimeout = 3 * time.Second
)

// nameBook resolves names for one session's history.
type nameBook struct {
	b      *Bot
	left   int  // lookups this session may still make
	gaveUp bool // a lookup ran out of time
}

// newNameBook starts a session's lookups.
func (b *Bot) newNameBook() *nameBook { return &nameBook{b: b, left: maxNameLookups} }

// name is user id's display name: known already, looked up while the
// session may, else the id.
func (n *nameBook) name(ctx context.Context, id string) string {
	b := n.b
	b.mu.Lock()
	name, ok := b.names[id]
	b.mu.Unlock()
	if ok {
		return name
	}
	if n.left <= 0 || n.gaveUp || ctx.Err() != nil {
		return id
	}
	n.left--
	lctx, cancel := context.WithTimeout(ratelimit.WithPriority(ctx, ratelimit.First), nameLookupTimeout)
	defer cancel()
	deadline, _ := lctx.Deadline()
	u, err := b.api.GetUserInfoContext(lctx, id)
	if err != nil {
		// The call on the wire is bounded by the same deadline and may be
		// told a moment before lctx is: either way it ran out of time.
		if errors.Is(err, context.DeadlineExceeded) || lctx.Err() != nil || !time.Now().Before(deadline) {
			n.gaveUp = true
		}
		return id
	}
	name = id
	switch {
	case u.Profile.DisplayName != "":
		name = u.Profile.DisplayName
	case u.RealName != "":
		name = u.RealName
	case u.Name != "":
		name = u.Name
	}
	b.mu.Lock()
	b.names[id] = name
	b.mu.Unlock()
	return name
}

// mentions writes the <@U…> mentions of text as @name.
func (n *nameBook) mentions(ctx context.Context, text string) string {
	return mentionRe.ReplaceAllStringFunc(text, func(m string) string {
		return "@" + n.name(ctx, m[2:len(m)-1])
	})
}
