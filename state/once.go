package state

import (
	"context"
	"time"
)

// TokenOnce is implemented by a Store whose Once may run on a server even
// when the caller sees an error (a timeout, a connection lost after the
// request left). OnceToken is Once for a caller that may call again with
// the same token after such an error: a call with the token that recorded
// key reports true again, any other token false. The token names one
// decision — the Slack headend uses the envelope's id — so the caller's
// own retry is not mistaken for a duplicate, and the event lost.
type TokenOnce interface {
	OnceToken(ctx context.Context, key, token string, ttl time.Duration) (bool, error)
}
