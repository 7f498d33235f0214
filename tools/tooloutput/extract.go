package tooloutput

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/tools"
)

// Mode is an extraction strategy.
type Mode string

// The strategies. Auto picks full-chunked or read-grep from the result's
// size and shape; truncate is the fallback when the chosen one fails.
const (
	ModeAuto        Mode = "auto"
	ModeFullChunked Mode = "full-chunked"
	ModeReadGrep    Mode = "read-grep"
	ModeTruncate    Mode = "truncate"
)

// Policy defaults, used for zero fields.
const (
	defaultMaxChunksForFullMode = 1
	defaultOverlapPercent       = 10
	defaultMapConcurrency       = 4
	defaultContextWindow        = 128000
	defaultMaxOutputTokens      = 4096
	// defaultTruncateBytes matches the default size cap of tool results
	// (tool_output.max_bytes), so a fallback is never larger than a result
	// that would have been shown whole.
	defaultTruncateBytes = 12288
	// longLineBytes is the average line length above which a result goes
	// to full-chunked: Read and Grep work on lines, and lines this long
	// (minified JSON, base64) defeat them.
	longLineBytes = 1000
)

// Policy tunes extraction. Zero fields take the defaults above.
type Policy struct {
	// MaxChunksForFullMode is the most chunks auto mode reads in full
	// before it prefers read-grep. At 1, full-chunked is a single pass.
	MaxChunksForFullMode int
	// OverlapPercent is how much of its neighbour each chunk repeats, so
	// that a record cut by a boundary is whole in one of them. 0 means the
	// default; a negative value, none. At most 50.
	OverlapPercent int
	// MapConcurrency is how many chunk calls run at once.
	MapConcurrency int
	// ContextWindow and MaxOutputTokens are the extraction model's, in tokens.
	ContextWindow   int
	MaxOutputTokens int
	// TruncateBytes is the size of the fallback's top and bottom together.
	TruncateBytes int
}

func (p Policy) withDefaults() Policy {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&p.MaxChunksForFullMode, defaultMaxChunksForFullMode)
	def(&p.MapConcurrency, defaultMapConcurrency)
	def(&p.ContextWindow, defaultContextWindow)
	def(&p.MaxOutputTokens, defaultMaxOutputTokens)
	def(&p.TruncateBytes, defaultTruncateBytes)
	if p.OverlapPercent == 0 {
		p.OverlapPercent = defaultOverlapPercent
	}
	p.OverlapPercent = min(max(p.OverlapPercent, 0), 50)
	return p
}

// Model makes one extraction call (a system prompt and one user message)
// and returns the model's text. The caller accounts usage and events.
type Model func(ctx context.Context, system, user string) (string, error)

// SubAgent runs a sub-agent whose only tools are fs's (Read and Grep) and
// returns its final report's text. synthetic is true when the session
// produced no real report (it hit a limit or failed).
type SubAgent func(ctx context.Context, system, user string, fs tools.Provider) (text string, synthetic bool, err error)

// Extractor answers tool_output calls.
type Extractor struct {
	Policy   Policy
	Model    Model
	SubAgent SubAgent
	Log      *zap.Logger
}

// Request is one tool_output call.
type Request struct {
	Store   *Store
	Handle  string
	Extract string
	Mode    Mode // "" = auto
}

// Outcome is the answer to a Request.
type Outcome struct {
	Text     string // the plain-text answer for the model
	OK       bool   // false: Text has the failure format
	Mode     Mode   // the strategy that produced Text
	Tried    Mode   // the strategy tried first
	FellBack bool   // Tried failed and Mode is truncate
	Calls    int    // model calls made (map, reduce and retries)
	// Err is why Tried failed, for logs; the model sees Text.
	Err error
}

// Extract answers req from the stored result. It never returns an error:
// a failed strategy falls back to the result's top and bottom with a
// warning, and only what leaves nothing to show (an unknown handle, a
// cancelled request, an unreadable file) gives the failure format.
func (x *Extractor) Extract(ctx context.Context, req Request) Outcome {
	log := x.Log
	if log == nil {
		log = zap.NewNop()
	}
	mode := req.Mode
	if mode == "" {
		mode = ModeAuto
	}
	var e *Entry
	ok := req.Store != nil
	if ok {
		e, ok = req.Store.Get(req.Handle)
	}
	if !ok {
		msg := fmt.Sprintf("There is no stored tool output with handle %q in this session.", req.Handle)
		if req.Store != nil {
			msg += "\n" + req.Store.handleList()
		}
		return Outcome{Text: failureText("unknown", req.Handle, mode, msg), Mode: mode, Tried: mode}
	}
	switch mode {
	case ModeAuto, ModeFullChunked, ModeReadGrep, ModeTruncate:
	default:
		msg := fmt.Sprintf("Unknown mode %q: use auto, full-chunked, read-grep or truncate (or leave it out).", mode)
		return Outcome{Text: failureText(e.Tool, e.Handle, mode, msg), Mode: mode, Tried: mode}
	}
	p := x.Policy.withDefaults()
	extract := strings.TrimSpace(req.Extract)
	log = log.With(zap.String("handle", e.Handle), zap.String("tool", e.Tool))
	if mode == ModeAuto {
		var why string
		mode, why = route(e, extract, p)
		log.Info("tool output: strategy chosen", zap.String("mode", string(mode)), zap.String("why", why))
	} else {
		log.Info("tool output: strategy requested", zap.String("mode", string(mode)))
	}
	out := Outcome{Mode: mode, Tried: mode}
	var abstract string
	var err error
	switch mode {
	case ModeFullChunked:
		abstract, out.Calls, err = x.fullChunked(ctx, e, extract, p)
	case ModeReadGrep:
		abstract, err = x.readGrep(ctx, req.Store, e, extract)
	case ModeTruncate:
		abstract, err = truncated(e, p.TruncateBytes, "")
	}
	if err == nil {
		out.Text, out.OK = successText(e.Tool, e.Handle, mode, abstract), true
		return out
	}
	out.Err = err
	if ctx.Err() != nil || mode == ModeTruncate {
		out.Text = failureText(e.Tool, e.Handle, mode, failureMessage(ctx, err))
		log.Warn("tool output: extraction failed", zap.String("mode", string(mode)), zap.Error(err))
		return out
	}
	log.Warn("tool output: extraction failed; falling back to truncate",
		zap.String("mode", string(mode)), zap.Error(err))
	out.Mode, out.FellBack = ModeTruncate, true
	warning := fmt.Sprintf("WARNING: extraction with %s failed (%v); this is the top and bottom of the output with the middle cut out", mode, err)
	abstract, terr := truncated(e, p.TruncateBytes, warning)
	if terr != nil {
		out.Text = failureText(e.Tool, e.Handle, ModeTruncate, fmt.Sprintf("extraction with %s failed (%v), and so did reading the output: %v", mode, err, terr))
		return out
	}
	out.Text, out.OK = successText(e.Tool, e.Handle, ModeTruncate, abstract), true
	return out
}

func failureMessage(ctx context.Context, err error) string {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "The extraction was stopped: the time for this request ran out."
	case ctx.Err() != nil:
		return "The extraction was cancelled."
	}
	return "The extraction failed: " + err.Error()
}

// route picks full-chunked when the whole result fits in the chunks auto
// mode may read, or when its lines are too long to Read and Grep;
// otherwise read-grep, whose cost does not grow with the result.
func route(e *Entry, extract string, p Policy) (Mode, string) {
	if e.Lines > 0 && e.Bytes/e.Lines > longLineBytes {
		return ModeFullChunked, fmt.Sprintf("average line of %d bytes is over %d", e.Bytes/e.Lines, longLineBytes)
	}
	budget := chunkBudget(e, extract, p)
	if n := chunkCount(e.Tokens, budget, p.OverlapPercent); budget > 0 && n <= p.MaxChunksForFullMode {
		return ModeFullChunked, fmt.Sprintf("%d tokens fit in %d chunk(s) of %d", e.Tokens, n, budget)
	}
	return ModeReadGrep, fmt.Sprintf("%d tokens need more than %d chunk(s) of %d", e.Tokens, p.MaxChunksForFullMode, budget)
}

// chunkBudget is how many tokens of the document one map call can take:
// the context window less the answer and the prompt around the chunk.
func chunkBudget(e *Entry, extract string, p Policy) int {
	// The widest index and total the prompt can show, so no chunk's prompt
	// is longer than the one counted.
	prompt := mapSystem(e, extract, "0123456789abcdef", 99999, 99999, p.OverlapPercent)
	return p.ContextWindow - p.MaxOutputTokens - llm.CountTokens(prompt) - llm.CountTokens(mapUser(""))
}

// chunkCount is how many chunks of at most budget tokens, each repeating
// overlap percent of its neighbour, cover tokens.
func chunkCount(tokens, budget, overlap int) int {
	if tokens <= budget {
		return 1
	}
	if budget <= 0 {
		return 0
	}
	core := budget * 100 / (100 + overlap)
	if core <= 0 {
		return 0
	}
	return (tokens + core - 1) / core
}
