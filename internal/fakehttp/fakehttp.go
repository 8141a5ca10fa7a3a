// Package fakehttp serves the fakes of eksboot's tests and simulations (IMDS, EC2,
// EKS) over HTTP on a free port of 127.0.0.1. Listening, serving and stopping are the
// same for every fake, so they live here once; what a fake answers, and what its own
// Close must release first (hung requests, handlers still running), stays with it.
package fakehttp

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"time"
)

// Server is an HTTP server on 127.0.0.1.
type Server struct {
	name string
	url  string
	srv  *http.Server
	quit chan error // the result of Serve

	closeOnce sync.Once
	closeErr  error
}

// Start listens on a free port of 127.0.0.1 and serves h there until Close. name
// ("fake ec2") starts its errors. The server's own error log is discarded: the fakes
// cut connections on purpose.
func Start(name string, h http.Handler) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("%s: listen on 127.0.0.1: %w", name, err)
	}
	s := &Server{
		name: name,
		url:  "http://" + ln.Addr().String(),
		srv:  &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second, ErrorLog: log.New(io.Discard, "", 0)},
		quit: make(chan error, 1),
	}
	go func() { s.quit <- s.srv.Serve(ln) }()
	return s, nil
}

// URL is the server's base URL, "http://127.0.0.1:PORT".
func (s *Server) URL() string { return s.url }

// Close stops the server, closes its connections and waits until it has stopped
// serving; handlers still running are the caller's to wait for. Calling it again
// returns the first call's result.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		err := s.srv.Close()
		if serveErr := <-s.quit; !errors.Is(serveErr, http.ErrServerClosed) {
			err = errors.Join(err, serveErr)
		}
		if err != nil {
			s.closeErr = fmt.Errorf("%s: close %s: %w", s.name, s.url, err)
		}
	})
	return s.closeErr
}
