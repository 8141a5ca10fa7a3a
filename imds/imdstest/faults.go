package imdstest

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// FaultKind is one way a path of the fake service misbehaves.
type FaultKind int

const (
	// FaultDelay answers normally, but only after Fault.Delay.
	FaultDelay FaultKind = iota + 1
	// FaultHang never answers: the request waits until the client gives up
	// or the Server closes.
	FaultHang
	// FaultClose closes the connection without answering.
	FaultClose
	// FaultStatus answers Fault.Status with the service's HTML error page.
	FaultStatus
	// FaultBody answers 200 with Fault.Body in place of the value, such as an
	// HTML page or "" (for the token path, in place of the token).
	FaultBody
	// FaultTokenExpiry expires every token handed out so far and answers 401,
	// as when a session token's TTL has run out: GETs answer 401 until the
	// client PUTs for a new token.
	FaultTokenExpiry
	// FaultLarge answers 200 with Fault.Size bytes of "x", streamed (the
	// server never holds the body), with its Content-Length: an answer far
	// larger than any real one.
	FaultLarge
	// FaultRedirect answers Fault.Status (307 when 0) with a Location header
	// of Fault.Location, as a hostile or misconfigured proxy in front of the
	// service would.
	FaultRedirect
)

// Fault is a misbehaviour of one path, for Times requests (any method).
type Fault struct {
	Kind   FaultKind
	Status int           // FaultStatus: the status code, e.g. 503
	Body   string        // FaultBody: the body answered with 200
	Delay  time.Duration // FaultDelay: how long each answer waits
	Size   int64         // FaultLarge: the length of the body
	// Location is FaultRedirect's Location header, e.g. "http://127.0.0.1:9/latest/meta-data/mac".
	Location string
	// Times is how many requests show the fault before the next one in the
	// list (or normal answers) takes over; 0 means every request from then on.
	Times int
}

// String names the fault as the request log shows it, e.g. "status 503".
func (f Fault) String() string {
	switch f.Kind {
	case FaultDelay:
		return "delay " + f.Delay.String()
	case FaultHang:
		return "hang"
	case FaultClose:
		return "close"
	case FaultStatus:
		return "status " + strconv.Itoa(f.Status)
	case FaultBody:
		return fmt.Sprintf("body %q", excerpt(f.Body))
	case FaultTokenExpiry:
		return "token expired"
	case FaultLarge:
		return "large " + strconv.FormatInt(f.Size, 10)
	case FaultRedirect:
		return fmt.Sprintf("redirect %d %s", f.redirectStatus(), excerpt(f.Location))
	}
	return fmt.Sprintf("fault %d", int(f.Kind))
}

// excerpt shortens a body for the request log.
func excerpt(s string) string {
	if len(s) > 20 {
		return s[:20] + "..."
	}
	return s
}

// redirectStatus is FaultRedirect's status: Status, else 307.
func (f Fault) redirectStatus() int {
	if f.Status == 0 {
		return http.StatusTemporaryRedirect
	}
	return f.Status
}

// SetFaults programs the faults requests for path (with or without a leading
// "/"; "latest/api/token" is the token path) show from now on, in order: the
// first one for its Times requests, then the next, and so on; after the last
// one (unless its Times is 0, which is forever) the path answers normally
// again. No faults clears the path's faults. SetHang takes precedence.
func (s *Server) SetFaults(path string, faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := strings.TrimLeft(path, "/")
	if len(faults) == 0 {
		delete(s.faults, k)
		return
	}
	s.faults[k] = append([]Fault(nil), faults...)
}

// ExpireTokens makes every token handed out so far invalid: GETs carrying one
// answer 401, and the next PUT /latest/api/token hands out a new token.
func (s *Server) ExpireTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen++
}

// SetTokenTTL makes each token handed out from now on live ttl (whole seconds,
// at least 1), whatever TTL was asked, and says so in its TTL header: a GET
// with it after that answers 401, as the real service does when a token has run
// out. Each PUT hands out a new token. 0 restores the default: the asked TTL
// echoed, never enforced.
func (s *Server) SetTokenTTL(ttl time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokenTTL = ttl
}

// SetIMDSv1 lets GETs without a token be answered (IMDSv1) when allowed is
// true; by default they answer 401, as on instances that require IMDSv2. A
// wrong or expired token answers 401 either way.
func (s *Server) SetIMDSv1(allowed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.v1 = allowed
}

// tokenOf returns the token handed out in generation gen.
func tokenOf(gen int) string {
	if gen == 0 {
		return Token
	}
	return Token + "-" + strconv.Itoa(gen)
}

// nextFault takes the fault the next request for key shows, if any. The
// caller holds s.mu.
func (s *Server) nextFault(key string) (Fault, bool) {
	list := s.faults[key]
	if len(list) == 0 {
		return Fault{}, false
	}
	f := list[0]
	switch {
	case f.Times == 0:
	case f.Times == 1 && len(list) == 1:
		delete(s.faults, key)
	case f.Times == 1:
		s.faults[key] = list[1:]
	default:
		list[0].Times--
	}
	return f, true
}

// misbehave answers r as fault f says (all kinds but FaultHang, which
// ServeHTTP handles) and returns the status code, 0 when none was sent; record is
// answer's.
func (s *Server) misbehave(w http.ResponseWriter, r *http.Request, f Fault, path, key string, record func(status int)) int {
	switch f.Kind {
	case FaultDelay:
		t := time.NewTimer(f.Delay)
		defer t.Stop()
		select {
		case <-t.C:
			return s.answer(w, r, path, key, record)
		case <-s.done:
		case <-r.Context().Done():
		}
		return 0
	case FaultClose:
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return 0
			}
		}
		panic(http.ErrAbortHandler) // aborts the response without an answer
	case FaultStatus:
		if f.Status == http.StatusNotFound {
			return send(w, f.Status, notFoundPage, map[string]string{"Content-Type": "text/html"})
		}
		return send(w, f.Status, errorPage(f.Status), map[string]string{"Content-Type": "text/html"})
	case FaultBody:
		return send(w, http.StatusOK, f.Body, nil)
	case FaultLarge:
		h := w.Header()
		h.Set("Server", "EC2ws")
		h.Set("Content-Type", "text/plain")
		h.Set("Content-Length", strconv.FormatInt(f.Size, 10))
		w.WriteHeader(http.StatusOK)
		_, _ = io.CopyN(w, xs{}, f.Size) // stops when the client hangs up
		return http.StatusOK
	case FaultRedirect:
		return send(w, f.redirectStatus(), "", map[string]string{"Location": f.Location})
	case FaultTokenExpiry:
		s.ExpireTokens()
		return send(w, http.StatusUnauthorized, errorPage(http.StatusUnauthorized), map[string]string{"Content-Type": "text/html"})
	}
	return send(w, http.StatusInternalServerError, errorPage(http.StatusInternalServerError), map[string]string{"Content-Type": "text/html"})
}

// xs is an endless stream of 'x'.
type xs struct{}

func (xs) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// errorPage is the HTML page the service sends with an error status.
func errorPage(status int) string {
	title := fmt.Sprintf("%d - %s", status, http.StatusText(status))
	return `<?xml version="1.0" encoding="iso-8859-1"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN"
	"http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en" lang="en">
 <head>
  <title>` + title + `</title>
 </head>
 <body>
  <h1>` + title + `</h1>
 </body>
</html>
`
}
