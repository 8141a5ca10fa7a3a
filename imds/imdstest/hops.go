package imdstest

import (
	"bufio"
	"fmt"
	"net/http"
	"syscall"
)

// SetHopLimit makes the token answers leave with IP TTL n, as the real service sends
// them with the instance's HttpPutResponseHopLimit (1 by default on a new instance,
// 2 on EKS managed node groups); 0 restores the system's TTL. Such an answer closes
// its connection, as the TTL is the connection's.
func (s *Server) SetHopLimit(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hopLimit = n
}

// sendWithTTL answers 200 with body on the request's own connection, after setting
// its IP TTL to ttl, then closes the connection. It calls record before the client
// can see the answer.
func sendWithTTL(w http.ResponseWriter, ttl int, body string, headers map[string]string, record func(status int)) int {
	conn, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return send(w, http.StatusInternalServerError, "Internal Server Error", nil)
	}
	defer conn.Close()
	if sc, ok := conn.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			_ = raw.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, syscall.IP_TTL, ttl) })
		}
	}
	record(http.StatusOK)
	writeRaw(rw.Writer, http.StatusOK, body, headers)
	_ = rw.Flush()
	return http.StatusOK
}

// writeRaw writes an HTTP/1.1 response as send would, with Connection: close.
func writeRaw(w *bufio.Writer, status int, body string, headers map[string]string) {
	fmt.Fprintf(w, "HTTP/1.1 %d %s\r\nServer: EC2ws\r\nContent-Type: text/plain\r\nConnection: close\r\nContent-Length: %d\r\n", status, http.StatusText(status), len(body))
	for k, v := range headers {
		fmt.Fprintf(w, "%s: %s\r\n", k, v)
	}
	fmt.Fprintf(w, "\r\n%s", body)
}
