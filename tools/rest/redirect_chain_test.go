package rest

import (
	"net/http"
	"testing"

	"github.com/slackbot/slackbot/config"
)

func TestARedirectChainNeverCarriesTheConfiguredHeaderToTheOtherHost(t *testing.T) {
	t.Parallel()
	// A → B/1 → B/2: the second hop stays on B, but B is not the host the
	// header was configured for.
	var other *peer
	other = newPeer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/1" {
			http.Redirect(w, r, other.URL+"/2", http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"landed":true}`))
	})
	first := newPeer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/1", http.StatusFound)
	})
	h := newHarness(t, map[string]config.RestTool{"hop": {URL: first.URL, Headers: map[string]config.Secret{"X-Api-Key": "k"}}}, nil, Options{})
	h.mustOK("rest__hop", `{}`)
	if got := first.last(t).Header.Get("X-Api-Key"); got != "k" {
		t.Errorf("the configured host got the key %q, want k", got)
	}
	other.mu.Lock()
	defer other.mu.Unlock()
	if len(other.reqs) != 2 {
		t.Fatalf("the other host got %d requests, want 2 (B/1, then B/2)", len(other.reqs))
	}
	for _, r := range other.reqs {
		if got := r.Header.Get("X-Api-Key"); got != "" {
			t.Errorf("the other host's %s got the key %q", r.Path, got)
		}
	}
}
