package slack

import (
	"context"
	"sync"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/attach"
)

// A session whose first model sees pictures may still have them answered
// by one that does not: the model chain falls back (a refusal, an outage,
// a rate limit), or a router hands the conversation to an agent whose
// models are blind. That model reads the per-picture note in place of
// each picture; the person is told too, once, in the thread, when the
// session ends and before its answer is delivered. A session whose first
// model is blind told them already, with the files' note.

// blindFallbackNote is what the person is told when a model that cannot
// see took over a question with pictures.
const blindFallbackNote = "_Attached files:_\n• A model that took over here cannot see images: it was told only that you attached one."

// blindWatch follows a session's model calls for one that could not see
// the question's pictures. Its zero value watches nothing.
type blindWatch struct {
	r *run
	// mu guards handoffs and blind: a session emits from the goroutines
	// of its tool calls too.
	mu sync.Mutex
	// handoffs are the ids of the hand-off calls whose sessions carry the
	// question's pictures on; sub-agents carry none.
	handoffs map[string]bool
	blind    bool
}

// watchBlind watches the session for a blind model when the question has
// pictures and the first model sees them.
func (r *run) watchBlind(files []attach.File) *blindWatch {
	for _, f := range files {
		if k, _ := attach.Sniff(f.Name, f.Type, f.Data); k == attach.KindImage {
			if !r.sees() {
				return &blindWatch{} // told with the files' note
			}
			return &blindWatch{r: r, handoffs: map[string]bool{}}
		}
	}
	return &blindWatch{}
}

// observe is the watch's agent.Observer; nil when there is nothing to watch.
func (w *blindWatch) observe() agent.Observer {
	if w.r == nil {
		return nil
	}
	return func(e agent.Event) {
		switch {
		case e.Kind == agent.EventToolStarted && e.Tool != nil && e.Tool.Name == agent.HandoffTool:
			w.mu.Lock()
			w.handoffs[e.Tool.ID] = true
			w.mu.Unlock()
		case e.Kind == agent.EventLLMCall && e.LLM != nil && e.LLM.Purpose == "" && e.LLM.Model != "":
			w.mu.Lock()
			defer w.mu.Unlock()
			if (e.Parent == "" || w.handoffs[e.Parent]) && !w.r.b.conf.LLM.Providers[e.LLM.Provider].Vision(e.LLM.Model) {
				w.blind = true
			}
		}
	}
}

// tell posts the note when a blind model took a call of the question.
func (w *blindWatch) tell(ctx context.Context, log *zap.Logger) {
	w.mu.Lock()
	blind := w.blind
	w.mu.Unlock()
	if !blind {
		return
	}
	log.Info("a model without vision took over a question with pictures")
	// The session may have been stopped: its answer is still posted, and
	// so is the note, on a clock of its own.
	nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), noteTimeout)
	defer cancel()
	if _, err := w.r.b.send(nctx, w.r.req.channel, w.r.req.threadTS, "", noteMessage(blindFallbackNote)); err != nil {
		log.Warn("the note on a model without vision could not be posted", zap.Error(slackError(err)))
	}
}
