package slack

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	slackapi "github.com/slack-go/slack"

	"github.com/slackbot/slackbot/agent"
)

// A session waiting on a person (an approval, a question put to them)
// says so in its display until the wait is over: a streamed message as a
// task "Waiting for @who" per wait, in progress, then complete with how it
// ended, and its agent session suspended meanwhile; a progress message in
// its headline. People are named by their display names, as plain text:
// "@name" pings nobody, and every word is escaped like the model's.

// waitKeyPrefix keys the task of a wait on a person by its id.
const waitKeyPrefix = "person:"

// maxWaitNames bounds the people a wait's title names.
const maxWaitNames = 3

// waitTitle is what a display says while a session waits on people
// (named, first the asker), or on anyone allowed when names is empty.
func waitTitle(names []string) string {
	if len(names) == 0 {
		return "Waiting for a person"
	}
	at := make([]string, 0, maxWaitNames)
	for i, n := range names {
		if i == maxWaitNames {
			break
		}
		at = append(at, "@"+strings.TrimPrefix(clipLine(n, 40), "@"))
	}
	switch rest := len(names) - len(at); {
	case rest > 0:
		return clipLine(fmt.Sprintf("Waiting for %s or %d more", strings.Join(at, ", "), rest), maxTaskTitle)
	case len(at) == 1:
		return clipLine("Waiting for "+at[0], maxTaskTitle)
	}
	return clipLine("Waiting for "+strings.Join(at[:len(at)-1], ", ")+" or "+at[len(at)-1], maxTaskTitle)
}

// waitNames are the people w waits on as a display names them: their
// display names where known or found (one users.info each, the session is
// about to wait on them anyway), else their ids.
func (b *Bot) waitNames(w *agent.WaitInfo) []string {
	if w == nil {
		return nil
	}
	book := b.newNameBook()
	out := make([]string, 0, len(w.Who))
	for i, id := range w.Who {
		if i >= maxWaitNames { // the title names three and counts the rest
			out = append(out, id)
			continue
		}
		out = append(out, book.name(b.work, id))
	}
	return out
}

// waitOn opens the task of wait w, titled, with what it waits for as its
// details; the tasks held for their turn's calls are shown first, as a
// wait may hold one of those calls back. tl.mu held.
func (tl *timeline) waitOn(w *agent.WaitInfo, title string, at time.Time) {
	tl.release()
	if tl.byKey[waitKeyPrefix+w.ID] != nil {
		return // told twice: one wait, one task
	}
	t := tl.open(waitKeyPrefix+w.ID, title, w.What, at)
	t.turn, t.index = tl.turns, math.MaxInt
	tl.waits++
}

// waitOver completes the task of wait w with how it ended; tl.mu held.
func (tl *timeline) waitOver(w *agent.WaitInfo) {
	t := tl.byKey[waitKeyPrefix+w.ID]
	if t == nil || done(t.status) {
		return
	}
	t.status, t.output = slackapi.TaskCardStatusComplete, sentence(w.Outcome)
	tl.changed[t] = true
	tl.waits--
}

// waiting is how many waits on a person are open.
func (tl *timeline) waiting() int {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return tl.waits
}

// sentence is s as a line starting with a capital: "approved" → "Approved".
func sentence(s string) string {
	s = clipLine(s, maxTaskLine)
	if s == "" {
		return "Over"
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// progressWaits is what a progress message remembers of the open waits:
// the headline of each, by id, in the order they began.
type progressWaits struct {
	ids   []string
	title map[string]string
}

func (w *progressWaits) begin(id, title string) {
	if w.title == nil {
		w.title = map[string]string{}
	}
	if _, ok := w.title[id]; !ok {
		w.ids = append(w.ids, id)
	}
	w.title[id] = title
}

func (w *progressWaits) end(id string) {
	if _, ok := w.title[id]; !ok {
		return
	}
	delete(w.title, id)
	for i, x := range w.ids {
		if x == id {
			w.ids = append(w.ids[:i:i], w.ids[i+1:]...)
			break
		}
	}
}

// headline is the newest open wait's title, "" when none is open.
func (w *progressWaits) headline() string {
	if len(w.ids) == 0 {
		return ""
	}
	return w.title[w.ids[len(w.ids)-1]]
}
