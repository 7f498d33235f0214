package state

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
)

// Cause says in words why a store call failed, without the address a
// network error carries: what the bot may log of a store's failure.
func Cause(err error) string {
	var dns *net.DNSError
	var nerr net.Error
	var verify *tls.CertificateVerificationError
	var host x509.HostnameError
	var authority x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &dns):
		return "its host name does not resolve"
	case errors.As(err, &nerr) && nerr.Timeout():
		return "timed out"
	case errors.As(err, &verify), errors.As(err, &host), errors.As(err, &authority), errors.As(err, &invalid):
		return "its TLS certificate was not accepted"
	case strings.Contains(err.Error(), "NOAUTH"), strings.Contains(err.Error(), "WRONGPASS"):
		return "authentication failed"
	case errors.As(err, &nerr), errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF):
		return "unreachable"
	default:
		return err.Error()
	}
}
