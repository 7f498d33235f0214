package emulator

import (
	"encoding/base64"
	"net/url"
	"strconv"
	"strings"
)

// page reads a paged method's limit (def when absent, at most 1000) and
// cursor over n items, as Slack does: the cursor is opaque to the caller
// and names where the next page starts. It returns the page's bounds and
// the next cursor, "" on the last page.
func page(p url.Values, def, n int) (offset, end int, next string, err *apiError) {
	limit := def
	if v := p.Get("limit"); v != "" {
		l, perr := strconv.Atoi(v)
		if perr != nil || l < 1 {
			return 0, 0, "", fail("invalid_limit")
		}
		limit = min(l, 1000)
	}
	if cur := p.Get("cursor"); cur != "" {
		raw, derr := base64.StdEncoding.DecodeString(cur)
		o, perr := strconv.Atoi(strings.TrimPrefix(string(raw), "offset:"))
		if derr != nil || perr != nil || o < 0 || o > n {
			return 0, 0, "", fail("invalid_cursor")
		}
		offset = o
	}
	end = min(offset+limit, n)
	if end < n {
		next = base64.StdEncoding.EncodeToString([]byte("offset:" + strconv.Itoa(end)))
	}
	return offset, end, next, nil
}
