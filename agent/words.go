package agent

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/slackbot/slackbot/blockkit"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/redact"
)

// How the loop puts what happened into words, for people and for logs.

func randomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// unreachable says, for the person waiting, why no model answered. It
// names the kind of failure, a failed connection in redact's fixed words:
// the technical error (hosts, addresses, gateway URLs) goes to the log
// with Result.Err, never to the user.
func unreachable(err error) string {
	var ce *llm.ChainError
	if errors.As(err, &ce) && ce.Wait > 0 {
		return fmt.Sprintf("There is no answer because the model service asked to wait %s before trying again, longer than this request can wait. "+
			"Please try again later.", humanDuration(ce.Wait))
	}
	why := "the model service failed"
	switch llm.KindOf(err) {
	case llm.ErrAuth:
		why = "the model service rejected the configured credentials"
	case llm.ErrQuota:
		why = "the model service's quota or credit is used up"
	case llm.ErrRateLimit:
		why = "the model service is limiting the rate of requests"
	case llm.ErrTimeout:
		why = "the model service did not answer in time"
	case llm.ErrNetwork:
		why = "the model service could not be reached"
		if how := redact.Network(err); how != "" && how != "unreachable" {
			why += " (" + how + ")"
		}
	case llm.ErrServer:
		why = "the model service is failing or overloaded"
	case llm.ErrBadRequest:
		why = "the model service refused the request"
	case llm.ErrBadResponse:
		why = "the model service sent answers that could not be read"
	}
	return "There is no answer because " + why + ". Please try again later; if it persists, tell whoever runs this bot."
}

// humanDuration writes d for people: "45 seconds", "10 minutes", "1 hour".
func humanDuration(d time.Duration) string {
	n, name := int64(d.Round(time.Minute)/time.Minute), "minute"
	switch {
	case d < time.Minute-time.Second/2:
		n, name = max(int64(d.Round(time.Second)/time.Second), 1), "second"
	case n%60 == 0 || n >= 120:
		n, name = (n+30)/60, "hour"
	}
	if n == 1 {
		return "1 " + name
	}
	return fmt.Sprintf("%d %ss", n, name)
}

// repairKinds summarises repairs for the log: each kind with its count.
func repairKinds(changes []blockkit.Change) string {
	counts := map[string]int{}
	var order []string
	for _, c := range changes {
		if counts[c.Kind] == 0 {
			order = append(order, c.Kind)
		}
		counts[c.Kind]++
	}
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = fmt.Sprintf("%s×%d", k, counts[k])
	}
	return strings.Join(parts, ", ")
}
