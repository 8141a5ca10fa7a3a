package imdstest

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/eksboot/eksboot/internal/fakehttp"
	"github.com/eksboot/eksboot/internal/siminstance"
)

// Token is the session token PUT /latest/api/token hands out until tokens
// expire (see ExpireTokens and FaultTokenExpiry); later ones differ from it.
const Token = "FAKE-IMDSV2-TOKEN-AQAEAxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx=="

const (
	tokenPath      = "/latest/api/token"
	tokenHeader    = "X-Aws-Ec2-Metadata-Token"
	tokenTTLHeader = "X-Aws-Ec2-Metadata-Token-Ttl-Seconds"
	maxTokenTTL    = 21600
)

// notFoundPage is the body of every 404, the HTML page the real service sends.
const notFoundPage = `<?xml version="1.0" encoding="iso-8859-1"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN"
	"http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en" lang="en">
 <head>
  <title>404 - Not Found</title>
 </head>
 <body>
  <h1>404 - Not Found</h1>
 </body>
</html>
`

// Request is one request the Server received.
type Request struct {
	// Method is the HTTP method, e.g. "GET".
	Method string
	// Path is the request path as sent, without the query.
	Path string
	// Status is the status code answered; 0 for a request that was hung
	// (see SetHang) or whose connection was closed, and so never answered.
	Status int
	// Fault names the fault that shaped the answer ("" for none), as
	// Fault.String gives it, e.g. "status 503" or "close".
	Fault string
}

// Server is a fake IMDSv2 listening on 127.0.0.1. It is safe for concurrent use.
type Server struct {
	http *fakehttp.Server
	done chan struct{} // closed by Close: releases hung requests

	mu       sync.Mutex
	idle     *sync.Cond         // signalled when inflight drops to 0; uses mu
	inflight int                // handlers running
	closed   bool               // Close has begun: new requests get 503
	tree     map[string]string  // path without leading "/" -> body
	hang     map[string]bool    // path without leading "/" -> hang its requests
	faults   map[string][]Fault // path without leading "/" -> faults still to show
	gen      int                // token generation: tokens of older ones are expired
	v1       bool               // GETs without a token are answered (IMDSv1)
	hopLimit int                // the IP TTL of token answers (SetHopLimit); 0: the system's
	tokenTTL time.Duration      // SetTokenTTL's lifetime of each token; 0: the asked TTL, never enforced
	expires  time.Time          // when the current token runs out (with tokenTTL)
	reqs     []Request

	closeOnce sync.Once
	closeErr  error
}

// NewServer starts a fake IMDS for inst on a free port of 127.0.0.1, serving
// in a goroutine until Close.
func NewServer(inst Instance) (*Server, error) {
	tree, err := buildTree(inst)
	if err != nil {
		return nil, err
	}
	s := &Server{
		done:   make(chan struct{}),
		tree:   tree,
		hang:   map[string]bool{},
		faults: map[string][]Fault{},
	}
	s.idle = sync.NewCond(&s.mu)
	if s.http, err = fakehttp.Start("imdstest", s); err != nil {
		return nil, err
	}
	return s, nil
}

// URL returns the server's base URL, "http://127.0.0.1:PORT".
func (s *Server) URL() string { return s.http.URL() }

// Close releases hung requests, stops the server and waits until its
// handlers have returned. Calling it again returns the first call's result.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		close(s.done)
		s.closeErr = s.http.Close()
		s.mu.Lock()
		for s.inflight > 0 {
			s.idle.Wait()
		}
		s.mu.Unlock()
	})
	return s.closeErr
}

// Requests returns a copy of the log of requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// SetOverride replaces the body of path (with or without a leading "/") from
// now on; a nil body makes the path answer 404. Folder listings are not changed.
func (s *Server) SetOverride(path string, body *string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	siminstance.ApplyOverride(s.tree, path, body)
}

// SetHang makes requests for path (with or without a leading "/", any method)
// go unanswered until Close, or until the client gives up, when hang is true;
// false restores normal answers for new requests.
func (s *Server) SetHang(path string, hang bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := strings.TrimLeft(path, "/")
	if hang {
		s.hang[k] = true
	} else {
		delete(s.hang, k)
	}
}

// ServeHTTP answers one request the way the simulated IMDS does.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path, _, _ := strings.Cut(r.RequestURI, "?")
	key := strings.TrimLeft(path, "/")

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		send(w, http.StatusServiceUnavailable, "Service Unavailable", nil)
		return
	}
	s.inflight++
	hung := s.hang[key]
	fault, faulty := s.nextFault(key)
	switch {
	case faulty && fault.Kind == FaultHang:
		hung = true
		s.reqs = append(s.reqs, Request{Method: r.Method, Path: path, Fault: fault.String()})
	case hung:
		s.reqs = append(s.reqs, Request{Method: r.Method, Path: path})
	case faulty && fault.Kind == FaultClose:
		// Logged before the connection closes: the client sees the close at once
		// and retries, and its retry can be answered (and the log read) before
		// this handler would get to log after the close.
		s.reqs = append(s.reqs, Request{Method: r.Method, Path: path, Fault: fault.String()})
	}
	s.mu.Unlock()
	defer s.finished()

	if hung {
		select {
		case <-s.done:
		case <-r.Context().Done():
		}
		return
	}
	var note string
	if faulty {
		note = fault.String()
	}
	// record logs the request once: after its answer, or before an answer that is
	// sent and its connection closed inside the handler (sendWithTTL), which the
	// client may follow with a request answered, and the log read, before this
	// handler would get to log.
	logged := false
	record := func(status int) {
		if logged {
			return
		}
		logged = true
		s.mu.Lock()
		s.reqs = append(s.reqs, Request{Method: r.Method, Path: path, Status: status, Fault: note})
		s.mu.Unlock()
	}
	switch {
	case faulty && fault.Kind == FaultClose:
		s.misbehave(w, r, fault, path, key, record)
	case faulty:
		record(s.misbehave(w, r, fault, path, key, record))
	default:
		record(s.answer(w, r, path, key, record))
	}
}

// finished marks the end of one handler.
func (s *Server) finished() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inflight--; s.inflight == 0 {
		s.idle.Broadcast()
	}
}

// answer writes the response to r and returns its status code. An answer that
// closes its connection calls record first.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, path, key string, record func(status int)) int {
	switch r.Method {
	case http.MethodPut:
		_, _ = io.Copy(io.Discard, r.Body)
		if path != tokenPath {
			return send(w, http.StatusForbidden, "Forbidden", nil)
		}
		ttl := r.Header.Get(tokenTTLHeader)
		if !validTTL(ttl) {
			return send(w, http.StatusBadRequest, "Bad Request", nil)
		}
		s.mu.Lock()
		if s.tokenTTL > 0 { // a new token each time, living tokenTTL whatever was asked
			s.gen++
			s.expires = time.Now().Add(s.tokenTTL)
			ttl = strconv.Itoa(int(s.tokenTTL / time.Second))
		}
		tok, hops := tokenOf(s.gen), s.hopLimit
		s.mu.Unlock()
		if hops > 0 {
			return sendWithTTL(w, hops, tok, map[string]string{tokenTTLHeader: ttl}, record)
		}
		return send(w, http.StatusOK, tok, map[string]string{tokenTTLHeader: ttl})
	case http.MethodGet:
		s.mu.Lock()
		tok, v1 := tokenOf(s.gen), s.v1
		expired := s.tokenTTL > 0 && time.Now().After(s.expires)
		body, ok := s.tree[key]
		s.mu.Unlock()
		if got := r.Header.Get(tokenHeader); (got != tok || expired) && (got != "" || !v1) {
			return send(w, http.StatusUnauthorized, "Unauthorized", nil)
		}
		if !ok {
			return send(w, http.StatusNotFound, notFoundPage, map[string]string{"Content-Type": "text/html"})
		}
		return send(w, http.StatusOK, body, nil)
	default:
		return send(w, http.StatusMethodNotAllowed, "Method Not Allowed", nil)
	}
}

// validTTL reports whether v is a token TTL the service accepts: 1..21600 seconds.
func validTTL(v string) bool {
	if v == "" || strings.Trim(v, "0123456789") != "" {
		return false
	}
	n, err := strconv.Atoi(v)
	return err == nil && n >= 1 && n <= maxTokenTTL
}

// send writes a text/plain response (unless headers set another
// Content-Type) and returns its status code.
func send(w http.ResponseWriter, status int, body string, headers map[string]string) int {
	h := w.Header()
	h.Set("Server", "EC2ws")
	h.Set("Content-Type", "text/plain")
	for k, v := range headers {
		h.Set(k, v)
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
	return status
}
