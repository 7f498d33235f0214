package playground

import (
	"crypto/subtle"
	"mime"
	"net"
	"net/http"
	"strings"

	"go.uber.org/zap"
)

// The page drives the bot with the developer's model key and tools, so
// only the page itself may drive it or read what it draws: not another
// site the developer's browser has open (a text/plain POST needs no
// preflight), and not a site whose name was rebound to this machine (DNS
// rebinding lets that site read the answers).
const (
	// tokenHeader carries the page's token on what its script posts.
	tokenHeader = "X-Playground-Token"
	// tokenParam carries it on the event stream, which EventSource opens
	// without a way to set a header.
	tokenParam = "token"
)

// guard passes on to next only what the page itself sends:
//   - a Host that names this machine — a loopback name or address, or the
//     very address the connection arrived at — on every path, pages and
//     assets included, so that a rebound name reads nothing; any port, so
//     that a forwarded port (ssh -L, a container's published port) works;
//   - a Sec-Fetch-Site, when sent, of same-origin or none, and an Origin,
//     when sent, that is the page's own; a visit by another site's link
//     (a top-level GET the linking site cannot read) may open the page;
//   - a JSON body on every POST: a form or text/plain body is what a
//     browser sends across sites without asking;
//   - the page's token on what drives or reads the bot (/send, /click,
//     /stop, /view, /prompt, /modal/…, /events): in a header, or in the
//     query for the event stream.
//
// A refusal is a 403 (415 for the body's type) with a short plain reason
// that repeats nothing of the request.
func (p *Playground) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", "frame-ancestors 'none'")
		h.Set("Referrer-Policy", "no-referrer")
		if !ownHost(r) {
			p.refuse(w, r, http.StatusForbidden, "the playground answers only at a loopback address such as 127.0.0.1, localhost or [::1]")
			return
		}
		if !topLevelVisit(r) {
			if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
				p.refuse(w, r, http.StatusForbidden, "the playground answers only its own page, not another site")
				return
			}
			if origin := r.Header.Get("Origin"); origin != "" && !strings.EqualFold(origin, "http://"+r.Host) {
				p.refuse(w, r, http.StatusForbidden, "the playground answers only its own page, not another origin")
				return
			}
		}
		if r.Method == http.MethodPost {
			if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
				p.refuse(w, r, http.StatusUnsupportedMediaType, "the playground accepts only application/json")
				return
			}
		}
		switch r.URL.Path {
		case "/send", "/click", "/stop", "/view", "/prompt", "/events", "/attach", "/file", "/modal/submit", "/modal/close":
			got := r.Header.Get(tokenHeader)
			if r.URL.Path == "/events" || r.URL.Path == "/file" {
				got = r.URL.Query().Get(tokenParam)
			}
			if subtle.ConstantTimeCompare([]byte(got), []byte(p.token)) != 1 {
				p.refuse(w, r, http.StatusForbidden, "the playground answers only its own page: reload it")
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// refuse answers a request the guard turned away, and notes it at debug
// level by its path and reason alone.
func (p *Playground) refuse(w http.ResponseWriter, r *http.Request, status int, reason string) {
	p.log.Debug("refused a request to the playground", zap.String("path", r.URL.Path), zap.String("reason", reason))
	http.Error(w, "forbidden: "+reason, status)
}

// ownHost tells whether the request's Host names this machine: localhost,
// a loopback address, or the address the connection was accepted on (the
// page opened by its address when it listens beyond loopback). A name
// other than localhost is refused even when it resolves here: that is what
// DNS rebinding sends.
func ownHost(r *http.Request) bool {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	} else {
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false
	}
	if ip.IsLoopback() {
		return true
	}
	local, ok := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr)
	return ok && !ip.IsUnspecified() && local.IP.Equal(ip)
}

// topLevelVisit tells whether the request opens a page in the browser's
// own window, as a link followed from another site does: that site cannot
// read what comes back, and the page does nothing until the person types.
func topLevelVisit(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
		r.Header.Get("Sec-Fetch-Mode") == "navigate" && r.Header.Get("Sec-Fetch-Dest") == "document"
}
