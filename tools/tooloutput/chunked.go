package tooloutput

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/slackbot/slackbot/llm"
)

// minChunkTokens is the smallest chunk worth a model call; a context
// window that leaves less is a configuration the strategy cannot use.
const minChunkTokens = 256

// span is a byte range [start, end) of the stored file.
type span struct{ start, end int64 }

// fullChunked reads the whole result with the model: one map call per
// chunk, then one reduce call over the chunks' answers (none when a single
// chunk holds the result). It returns the abstract and the calls it made.
func (x *Extractor) fullChunked(ctx context.Context, e *Entry, extract string, p Policy) (string, int, error) {
	if x.Model == nil {
		return "", 0, errors.New("no extraction model is configured")
	}
	budget := chunkBudget(e, extract, p)
	if budget < minChunkTokens {
		return "", 0, fmt.Errorf("the extraction model's context window (%d tokens, %d for the answer) leaves no room for a chunk", p.ContextWindow, p.MaxOutputTokens)
	}
	n := chunkCount(e.Tokens, budget, p.OverlapPercent)
	f, err := os.Open(e.Path)
	if err != nil {
		return "", 0, fmt.Errorf("reading the stored output: %w", err)
	}
	defer f.Close()
	overlap := p.OverlapPercent
	if n == 1 {
		overlap = 0
	}
	spans, err := splitSpans(f, int64(e.Bytes), n, overlap)
	if err != nil {
		return "", 0, fmt.Errorf("reading the stored output: %w", err)
	}
	nonce := randomHex(8)
	answers, calls, err := x.mapChunks(ctx, f, e, extract, nonce, spans, overlap, p.MapConcurrency)
	if err != nil {
		return "", calls, err
	}
	answer := answers[0]
	if len(answers) > 1 {
		var rc int
		answer, rc, err = x.reduce(ctx, e, extract, nonce, answers, p)
		calls += rc
		if err != nil {
			return "", calls, err
		}
	}
	how := fmt.Sprintf("read in full in %d chunk(s)", len(spans))
	return abstractOf(answer, e, extract, how), calls, nil
}

// mapChunks asks about every chunk, at most limit at once, and stops the
// rest at the first failure: one chunk left unread makes the whole answer
// unreliable, so there is no point paying for the others.
func (x *Extractor) mapChunks(ctx context.Context, f *os.File, e *Entry, extract, nonce string, spans []span, overlap, limit int) ([]string, int, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	answers := make([]string, len(spans))
	var (
		mu    sync.Mutex
		calls int
		wg    sync.WaitGroup
	)
	sem := make(chan struct{}, limit)
	for i, sp := range spans {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			chunk, err := readSpan(f, sp)
			if err != nil {
				cancel(fmt.Errorf("reading chunk %d of the stored output: %w", i+1, err))
				return
			}
			system := mapSystem(e, extract, nonce, i+1, len(spans), overlap)
			a, c, err := x.ask(ctx, system, mapUser(chunk), nonce)
			mu.Lock()
			calls += c
			mu.Unlock()
			if err != nil {
				cancel(fmt.Errorf("chunk %d of %d: %w", i+1, len(spans), err))
				return
			}
			answers[i] = a
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, calls, err
	}
	return answers, calls, nil
}

// reduce combines the chunks' answers in one call, or, when they are too
// many for one context window, in rounds of calls over groups that fit.
func (x *Extractor) reduce(ctx context.Context, e *Entry, extract, nonce string, answers []string, p Policy) (string, int, error) {
	room := p.ContextWindow - p.MaxOutputTokens - llm.CountTokens(reduceUser)
	calls := 0
	for {
		groups := groupAnswers(answers, func(g []string) bool {
			return llm.CountTokens(reduceSystem(e, extract, nonce, formatAnswers(g))) <= room
		})
		if len(groups) == len(answers) && len(answers) > 1 {
			return "", calls, fmt.Errorf("the %d chunk answers are too long to combine within the model's context window", len(answers))
		}
		next := make([]string, 0, len(groups))
		for _, g := range groups {
			a, c, err := x.ask(ctx, reduceSystem(e, extract, nonce, formatAnswers(g)), reduceUser, nonce)
			calls += c
			if err != nil {
				return "", calls, fmt.Errorf("combining the chunk answers: %w", err)
			}
			next = append(next, a)
		}
		if len(next) == 1 {
			return next[0], calls, nil
		}
		answers = next
	}
}

// groupAnswers splits answers into consecutive groups that fit, each as
// large as it can be.
func groupAnswers(answers []string, fits func([]string) bool) [][]string {
	var groups [][]string
	for start := 0; start < len(answers); {
		end := start + 1
		for end < len(answers) && fits(answers[start:end+1]) {
			end++
		}
		groups = append(groups, answers[start:end])
		start = end
	}
	return groups
}

func formatAnswers(answers []string) string {
	var b strings.Builder
	for i, a := range answers {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("--- CHUNK " + strconv.Itoa(i+1) + " of " + strconv.Itoa(len(answers)) + " ---\n")
		b.WriteString(a)
	}
	return b.String()
}

// ask makes one extraction call and returns the content of the answer's
// wrapper. A call that fails or answers without the wrapper is tried once
// more: models occasionally drop the wrapper or a request fails in
// transit, and one retry is far cheaper than giving up a whole extraction.
func (x *Extractor) ask(ctx context.Context, system, user, nonce string) (string, int, error) {
	var err error
	for attempt := 1; attempt <= 2; attempt++ {
		var text string
		text, err = x.Model(ctx, system, user)
		if ctx.Err() != nil {
			return "", attempt, ctx.Err()
		}
		if err == nil {
			content, _, ok := llm.FindFinal(text, nonce)
			switch {
			case !ok:
				err = errors.New("the model's answer had no final-report wrapper with this extraction's nonce")
			case content == "":
				err = errors.New("the model's final-report wrapper was empty")
			default:
				return content, attempt, nil
			}
		}
	}
	return "", 2, err
}

// abstractOf turns a model's answer into the abstract the caller sees,
// spelling out what was searched when nothing was found.
func abstractOf(answer string, e *Entry, extract, how string) string {
	rest, ok := strings.CutPrefix(answer, notFound)
	if !ok {
		return answer
	}
	var b strings.Builder
	b.WriteString(notFound + "\n")
	b.WriteString("Searched for: " + extract + "\n")
	fmt.Fprintf(&b, "Searched: the whole output of %s (%d bytes, %d lines), %s.", e.Tool, e.Bytes, e.Lines, how)
	if rest = strings.TrimSpace(rest); rest != "" {
		b.WriteString("\nWhat the output holds: " + rest)
	}
	return b.String()
}

// splitSpans cuts size bytes into n chunks of equal size, each but the
// first starting overlap percent of a chunk before its boundary. Cuts fall
// on a line boundary when one is close, else on a rune boundary.
func splitSpans(r io.ReaderAt, size int64, n, overlap int) ([]span, error) {
	if n <= 1 || size == 0 {
		return []span{{0, size}}, nil
	}
	core := size / int64(n)
	window := min(core/20, 8192)
	ov := core * int64(overlap) / 100
	cuts := make([]int64, n+1)
	cuts[n] = size
	for k := 1; k < n; k++ {
		c, err := snap(r, size, int64(k)*core, window)
		if err != nil {
			return nil, err
		}
		cuts[k] = max(c, cuts[k-1])
	}
	spans := make([]span, 0, n)
	for k := range n {
		if cuts[k+1] == cuts[k] {
			continue // snapping merged two cuts on a tiny document
		}
		start := cuts[k]
		if k > 0 && ov > 0 {
			s, err := snap(r, size, cuts[k]-ov, window)
			if err != nil {
				return nil, err
			}
			start = min(s, cuts[k])
		}
		spans = append(spans, span{start, cuts[k+1]})
	}
	return spans, nil
}

// snap moves pos to the start of the nearest line within window bytes, or
// else back to the start of the rune it falls in.
func snap(r io.ReaderAt, size, pos, window int64) (int64, error) {
	pos = min(max(pos, 0), size)
	lo, hi := max(pos-window, 0), min(pos+window+1, size)
	buf := make([]byte, hi-lo)
	if _, err := r.ReadAt(buf, lo); err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	at := pos - lo
	best := int64(-1)
	if i := bytes.LastIndexByte(buf[:at], '\n'); i >= 0 {
		best = int64(i) + 1
	}
	if j := bytes.IndexByte(buf[at:], '\n'); j >= 0 && at+int64(j)+1 <= int64(len(buf)) {
		if after := at + int64(j) + 1; best < 0 || after-at < at-best {
			best = after
		}
	}
	if best >= 0 {
		return lo + best, nil
	}
	for at > 0 && at < int64(len(buf)) && !utf8.RuneStart(buf[at]) {
		at--
	}
	return lo + at, nil
}

// readSpan reads one chunk into a string.
func readSpan(f *os.File, sp span) (string, error) {
	buf := make([]byte, sp.end-sp.start)
	if _, err := f.ReadAt(buf, sp.start); err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	return string(buf), nil
}
