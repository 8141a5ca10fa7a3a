//go:build !linux

package doctor

import (
	"errors"
	"net"
)

// newHopProbe: the raw socket that reads the token answer's TTL is Linux's.
func newHopProbe(*net.TCPAddr) (hopProbe, error) {
	return nil, errors.New("not measured (Linux only)")
}
