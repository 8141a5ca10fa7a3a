package bootstrap

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/eksboot/eksboot/internal/quote"
)

// decodeCA decodes the base64 CA and checks it is a PEM bundle of certificates.
func decodeCA(b64 string) ([]byte, error) {
	clean := strings.Map(func(r rune) rune {
		if r == ' ' || r == '\n' || r == '\r' || r == '\t' {
			return -1
		}
		return r
	}, b64)
	der, err := base64.StdEncoding.DecodeString(clean)
	if err != nil {
		return nil, errors.New("not valid base64; want the base64 encoding of the cluster CA's PEM certificate (certificateAuthority.data of eks:DescribeCluster)")
	}
	rest := der
	n := 0
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("decodes to a PEM %s block; want only CERTIFICATE blocks", quote.Value(block.Type))
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return nil, errors.New("decodes to a PEM block that is not a valid X.509 certificate")
		}
		n++
	}
	if n == 0 || strings.TrimSpace(string(rest)) != "" {
		return nil, errors.New("does not decode to a PEM certificate; want the base64 encoding of the cluster CA's PEM certificate")
	}
	return der, nil
}

// checkEndpoint accepts https://host[:port][/] with a DNS name or IP address as host.
func checkEndpoint(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return errors.New("not a URL")
	}
	switch {
	case u.Scheme != "https":
		return errors.New("the scheme is not https")
	case u.User != nil:
		return errors.New("user info is not allowed")
	case u.Opaque != "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(s, "?#"):
		return errors.New("only scheme, host and port are allowed")
	}
	host := u.Hostname()
	if host == "" {
		return errors.New("the host is missing")
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return errors.New("the port is not a number from 1 to 65535")
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return errors.New("the port is empty")
	}
	if net.ParseIP(host) != nil {
		return nil
	}
	if len(host) > 253 {
		return errors.New("the host name is too long")
	}
	for _, label := range strings.Split(strings.TrimSuffix(host, "."), ".") {
		if !isDNSLabel(label) {
			return fmt.Errorf("%s is not a DNS host name", quote.Value(host))
		}
	}
	return nil
}

// maxExtraArgs bounds --kubelet-extra-args, well under systemd's limit for a unit file
// line and far above any real kubelet command line.
const maxExtraArgs = 64 << 10

// checkArgs rejects what cannot reach the kubelet's environment intact through a
// systemd drop-in, or would reach it as something else than was meant: line breaks and
// other control characters (C0, DEL, C1 such as U+0085, which some tools take as a
// line break), bytes that are not UTF-8 (\xff), and characters that print as nothing
// or as a space but are not one (U+00A0, U+2028, U+200B, U+FEFF): the arguments would
// not split where they seem to.
func checkArgs(s string) error {
	if len(s) > maxExtraArgs {
		return fmt.Errorf("%d bytes is more than the %d allowed", len(s), maxExtraArgs)
	}
	for i, r := range s {
		switch {
		case r == '\t' || r == ' ':
		case r == '\n' || r == '\r':
			return fmt.Errorf("a line break at byte %d is not allowed; put all arguments on one line", i)
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			return fmt.Errorf("byte 0x%02x at byte %d is not UTF-8; want printable text on one line", s[i], i)
		case r < 0x20 || r == 0x7f || (0x80 <= r && r < 0xa0):
			return fmt.Errorf("control character %U at byte %d is not allowed; put all arguments on one line", r, i)
		case !unicode.IsPrint(r):
			return fmt.Errorf("non-printable character %U at byte %d is not allowed; want printable text, arguments separated by spaces", r, i)
		}
	}
	return nil
}
