package redact

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/url"
	"path"
	"strings"
	"syscall"
)

// An error in words: what the bot may log, return or show of a failure.
// Network errors quote addresses and request URLs (query and userinfo
// included), so the failures a network causes are named in fixed words
// that hold neither.

// Network says in fixed words how the network failed err: "connection
// refused", "its host name does not resolve", "timed out", "its TLS
// certificate was not accepted" or "unreachable". It returns "" when err is
// no such failure, for a caller that shows nothing else of it.
func Network(err error) string {
	var dns *net.DNSError
	var nerr net.Error
	var verify *tls.CertificateVerificationError
	var host x509.HostnameError
	var authority x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	switch {
	case err == nil, errors.Is(err, context.Canceled):
		// A *url.Error is itself a net.Error: a request its caller gave
		// up is no failure of the network.
		return ""
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &dns):
		return "its host name does not resolve"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &nerr) && nerr.Timeout():
		return "timed out"
	case errors.As(err, &verify), errors.As(err, &host), errors.As(err, &authority), errors.As(err, &invalid):
		return "its TLS certificate was not accepted"
	case errors.As(err, &nerr), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "unreachable"
	}
	return ""
}

// Cause says in words why a call failed: Network's words for a failure of
// the network, "cancelled" for a call its caller gave up, "authentication
// failed" for a server refusing the credentials (Redis's NOAUTH and
// WRONGPASS), and otherwise the error's own text through String. A network
// error's address never shows.
func Cause(err error) string {
	why, _ := words(err)
	return why
}

// words is Cause, and whether the words are fixed ones of ours rather than
// the error's own text.
func words(err error) (string, bool) {
	if err == nil {
		return "", false
	}
	if why := Network(err); why != "" {
		return why, true
	}
	msg := err.Error()
	switch {
	case errors.Is(err, context.Canceled):
		return "cancelled", true
	case strings.Contains(msg, "NOAUTH"), strings.Contains(msg, "WRONGPASS"):
		return "authentication failed", true
	}
	return String(msg), false
}

// Error returns err with a text fit for a log line or an error message. A
// *url.Error, whose text quotes the request's URL and the server's address,
// reads "service: method: cause", the method being the last element of the
// URL's path (for an API whose path names its method, like Slack's
// chat.postMessage) and the cause as Cause words it. Another error Cause
// has fixed words for reads "service: cause"; any other keeps its own text
// through String. errors.Is and errors.As still reach err.
func Error(service string, err error) error {
	if err == nil {
		return nil
	}
	var ue *url.Error
	if !errors.As(err, &ue) {
		why, fixed := words(err)
		if !fixed {
			return worded{why, err}
		}
		return worded{prefixed(service, why), err}
	}
	why := Cause(ue.Err)
	if u, perr := url.Parse(ue.URL); perr == nil {
		if method := path.Base(u.Path); method != "." && method != "/" {
			why = method + ": " + why
		}
	}
	return worded{prefixed(service, why), err}
}

func prefixed(service, s string) string {
	if service == "" {
		return s
	}
	return service + ": " + s
}

// worded is an error shown in words of our own, wrapping the original.
type worded struct {
	words string
	err   error
}

func (e worded) Error() string { return e.words }
func (e worded) Unwrap() error { return e.err }
