package testdoc

import (
	"fmt"
	"strings"
)

// FiveMegabyteLog is a log of about 5 MB with one ERROR line in its middle;
// it returns the log and that line.
func FiveMegabyteLog() (string, string) {
	const needle = "2026-11-23T12:00:00 ERROR payment gateway timed out for order 4242"
	var b strings.Builder
	for i := 0; b.Len() < 5<<20; i++ {
		if i == 35000 {
			b.WriteString(needle + "\n")
		}
		fmt.Fprintf(&b, "2026-11-23T%02d:%02d:%02d INFO request %d served in 12ms by worker-%d\n", i/3600%24, i/60%60, i%60, i, i%8)
	}
	return b.String(), needle
}
