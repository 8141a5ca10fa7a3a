package doctor

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
)

// criVersionMethod is CRI's RuntimeService.Version (k8s.io/cri-api, runtime/v1).
const criVersionMethod = "/runtime.v1.RuntimeService/Version"

// GRPCCRI asks the runtime's CRI socket its version: one unary gRPC call, HTTP/2
// without TLS over the unix socket (Go's own HTTP/2), its messages encoded with
// a small reader of protobuf's wire format (wire.go). The VersionRequest is empty and
// the answer's fields are strings 1-4 (version, runtime_name, runtime_version,
// runtime_api_version); a gRPC client and the CRI API's generated code would add
// megabytes to the binary for this one call, and even protobuf's protowire package
// brings an init that opens and reads the executable at every start of eksboot
// (google.golang.org/protobuf/internal/detrand).
type GRPCCRI struct{}

// Version implements CRI.
func (GRPCCRI) Version(ctx context.Context, sock string) (CRIVersion, error) {
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	tr := &http.Transport{
		Protocols: &protocols,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
		DisableKeepAlives:      true,
		MaxResponseHeaderBytes: 16 << 10,
	}
	defer tr.CloseIdleConnections()
	// An empty message: the 5-byte gRPC frame header (not compressed, length 0).
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://localhost"+criVersionMethod, bytes.NewReader(make([]byte, 5)))
	if err != nil {
		return CRIVersion{}, err
	}
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("TE", "trailers")
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		err = unwrapURL(err)
		switch {
		case errors.Is(err, syscall.ENOENT):
			return CRIVersion{}, errors.New("no such socket")
		case errors.Is(err, syscall.ECONNREFUSED):
			return CRIVersion{}, errors.New("connection refused: nothing listens on it")
		}
		return CRIVersion{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return CRIVersion{}, err
	}
	status := resp.Trailer.Get("Grpc-Status")
	if status == "" {
		status = resp.Header.Get("Grpc-Status") // a trailers-only answer
	}
	if resp.StatusCode != http.StatusOK || status != "0" {
		msg := resp.Trailer.Get("Grpc-Message") + resp.Header.Get("Grpc-Message")
		return CRIVersion{}, fmt.Errorf("HTTP %d, gRPC status %s %s", resp.StatusCode, cmpOr(status, "(none)"), clip(msg, 120))
	}
	if len(body) < 5 || body[0] != 0 || int(binary.BigEndian.Uint32(body[1:5])) != len(body)-5 {
		return CRIVersion{}, fmt.Errorf("not a gRPC answer (%d bytes)", len(body))
	}
	return parseVersionResponse(body[5:])
}

// parseVersionResponse decodes a CRI VersionResponse.
func parseVersionResponse(b []byte) (CRIVersion, error) {
	var v CRIVersion
	for len(b) > 0 {
		num, typ, n := consumeTag(b)
		if n < 0 {
			return v, errWire
		}
		b = b[n:]
		if typ != wireBytes {
			n = consumeFieldValue(num, typ, b, 0)
			if n < 0 {
				return v, errWire
			}
			b = b[n:]
			continue
		}
		s, n := consumeBytes(b)
		if n < 0 {
			return v, errWire
		}
		b = b[n:]
		switch num {
		case 2:
			v.RuntimeName = string(s)
		case 3:
			v.RuntimeVersion = string(s)
		case 4:
			v.RuntimeAPIVersion = string(s)
		}
	}
	if v.RuntimeName == "" {
		return v, errors.New("the Version answer names no runtime")
	}
	v.RuntimeName = strings.TrimSpace(v.RuntimeName)
	return v, nil
}
