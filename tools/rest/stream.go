package rest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/tools"
)

// streamEnd says why a json-stream stopped before its done line.
type streamEnd string

const (
	streamDone     streamEnd = ""
	streamEOF      streamEnd = "ended before its last line"
	streamTimeout  streamEnd = "did not finish in time"
	streamTooLarge streamEnd = "grew past its size limit"
)

// readStream reads a json-stream answer: one JSON object per line, whose
// discriminator field tells token lines (a piece of the answer) from the
// done line (the end, perhaps carrying the whole answer). Other lines —
// keep-alives, comments, kinds the config does not name — are skipped. A
// stream that stops early still gives what arrived, with a note, because a
// partial answer is worth more to the model than none.
//
// ctx is the call's context and sctx the stream's own (ctx bounded by the
// stream timeout): when only sctx ended, the stream ran out of time.
func readStream(ctx, sctx context.Context, st *config.RestStreaming, body io.Reader, maxBytes int, limit time.Duration) (tools.Result, error) {
	if st.MaxBytes > 0 {
		maxBytes = st.MaxBytes
	}
	lr := &io.LimitedReader{R: body, N: int64(maxBytes)}
	sc := bufio.NewScanner(lr)
	sc.Buffer(make([]byte, 0, 64*1024), maxBytes+1)

	var answer strings.Builder
	var final *string
	end := streamEOF
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if st.LinePrefix != "" {
			p := strings.TrimSpace(st.LinePrefix)
			if !bytes.HasPrefix(line, []byte(p)) {
				continue
			}
			line = bytes.TrimSpace(line[len(p):])
		}
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var obj map[string]any
		if json.Unmarshal(line, &obj) != nil {
			continue
		}
		kind, _ := obj[st.DiscriminatorField].(string)
		switch {
		case kind == st.DoneValue:
			if st.AnswerField != "" {
				if v, ok := obj[st.AnswerField]; ok && v != nil {
					s := text(v)
					final = &s
				}
			}
			end = streamDone
		case st.TokenValue != "" && kind == st.TokenValue:
			if v, ok := obj[st.TokenField]; ok && v != nil {
				answer.WriteString(text(v))
			}
		}
		if end == streamDone {
			break
		}
	}
	if end != streamDone {
		err := sc.Err()
		switch {
		case ctx.Err() != nil:
			return tools.Result{}, ctx.Err()
		case sctx.Err() != nil:
			end = streamTimeout
		case errors.Is(err, bufio.ErrTooLong) || lr.N <= 0:
			end = streamTooLarge
		case err != nil && !errors.Is(err, io.ErrUnexpectedEOF):
			// A broken connection is an early end like any other: keep
			// what arrived.
		}
	}
	if final != nil {
		return tools.Result{Content: *final}, nil
	}
	got := answer.String()
	if end == streamDone {
		if strings.TrimSpace(got) == "" {
			return tools.Result{Content: "(the answer was empty)"}, nil
		}
		return tools.Result{Content: got}, nil
	}
	note := string(end)
	switch end {
	case streamTimeout:
		note = fmt.Sprintf("did not finish within %s", limit)
	case streamTooLarge:
		note = fmt.Sprintf("grew past %d bytes", maxBytes)
	}
	if strings.TrimSpace(got) == "" {
		return tools.Result{Content: fmt.Sprintf("The answer stream %s before any answer arrived.", note), IsError: true}, nil
	}
	return tools.Result{Content: fmt.Sprintf("%s\n\n[the answer stream %s; this answer may be incomplete]", got, note)}, nil
}
