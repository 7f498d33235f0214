package tooloutput

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/slackbot/slackbot/llm"
)

// readGrep lets a sub-agent search the file with Read and Grep. A report
// the session made up because the sub-agent never gave one (it ran out of
// turns, or failed) is a failure: it is no answer from the document.
func (x *Extractor) readGrep(ctx context.Context, s *Store, e *Entry, extract string) (string, error) {
	if x.SubAgent == nil {
		return "", errors.New("no sub-agent runner is configured")
	}
	dir := s.Dir()
	nonce := randomHex(8)
	text, synthetic, err := x.SubAgent(ctx, readGrepSystem(e, dir, extract, nonce), readGrepUser(e, extract), fsProviderAt(dir))
	switch {
	case err != nil:
		return "", fmt.Errorf("the read-grep sub-agent failed: %w", err)
	case synthetic:
		return "", errors.New("the read-grep sub-agent ended without a report of its own")
	}
	// The runner usually unwraps the report itself; a report that still
	// carries this extraction's wrapper is unwrapped here.
	if content, _, ok := llm.FindFinal(text, nonce); ok {
		text = content
	}
	if text = strings.TrimSpace(text); text == "" {
		return "", errors.New("the read-grep sub-agent's report was empty")
	}
	return abstractOf(text, e, extract, "searched with Read and Grep"), nil
}
