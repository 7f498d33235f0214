package slack

import (
	"fmt"
	"time"
)

// slowed says, for the progress message, that updates come less often
// than configured; "" when they do not.
func slowed(base, iv time.Duration) string {
	if iv <= base*3/2 || iv < 2*time.Second {
		return ""
	}
	return fmt.Sprintf("busy: updates every %d s", int(iv.Round(time.Second)/time.Second))
}
