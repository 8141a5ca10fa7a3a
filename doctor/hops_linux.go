//go:build linux

package doctor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"syscall"
)

// rawProbe reads copies of the TCP segments the kernel receives (a raw IPPROTO_TCP
// socket: every segment, IP header included), keeping those from one peer. IMDS
// sends its token answers with the IP TTL set to the instance's hop limit, and on
// the instance itself they arrive with it unchanged; each hop (the node's routing to
// a pod's network namespace) takes one off and drops the answer at 0. A TCP socket
// cannot read the TTL of what it receives (IP_RECVTTL is for datagrams), hence the
// raw socket; it needs CAP_NET_RAW.
type rawProbe struct {
	fd     int
	remote *net.TCPAddr
}

// newHopProbe opens the raw socket before the request is sent, so that it sees the
// answer.
func newHopProbe(remote *net.TCPAddr) (hopProbe, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_RAW|syscall.SOCK_CLOEXEC, syscall.IPPROTO_TCP)
	if err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
			return nil, errors.New("not measured (reading the token answer's TTL needs root: CAP_NET_RAW)")
		}
		return nil, fmt.Errorf("not measured (raw socket: %v)", err)
	}
	_ = syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_RCVBUF, 1<<20)
	return &rawProbe{fd: fd, remote: remote}, nil
}

// TTL drains what the socket queued (without waiting: the answer has been read, so
// its segments were delivered) and returns the lowest TTL of the peer's segments to
// local that carry data.
func (p *rawProbe) TTL(local *net.TCPAddr) (int, error) {
	buf := make([]byte, 65536)
	ttl := 0
	for i := 0; i < 100000; i++ {
		n, _, err := syscall.Recvfrom(p.fd, buf, syscall.MSG_DONTWAIT)
		if err != nil {
			break
		}
		if t, ok := segmentTTL(buf[:n], p.remote, local); ok && (ttl == 0 || t < ttl) {
			ttl = t
		}
	}
	if ttl == 0 {
		return 0, errors.New("not measured (no segment of the token answer was seen)")
	}
	return ttl, nil
}

// Close closes the socket.
func (p *rawProbe) Close() { _ = syscall.Close(p.fd) }

// segmentTTL returns the TTL of an IPv4 packet holding a TCP segment with data from
// remote to local.
func segmentTTL(pkt []byte, remote, local *net.TCPAddr) (int, bool) {
	if len(pkt) < 20 || pkt[0]>>4 != 4 || pkt[9] != syscall.IPPROTO_TCP {
		return 0, false
	}
	ihl := int(pkt[0]&0x0f) * 4
	total := int(binary.BigEndian.Uint16(pkt[2:4]))
	if ihl < 20 || len(pkt) < ihl+20 || total > len(pkt) {
		return 0, false
	}
	src, dst := net.IP(pkt[12:16]), net.IP(pkt[16:20])
	tcp := pkt[ihl:total]
	sport, dport := int(binary.BigEndian.Uint16(tcp[0:2])), int(binary.BigEndian.Uint16(tcp[2:4]))
	dataOff := int(tcp[12]>>4) * 4
	if !src.Equal(remote.IP) || sport != remote.Port || dport != local.Port || !dst.Equal(local.IP) || len(tcp) <= dataOff {
		return 0, false
	}
	return int(pkt[8]), true
}
