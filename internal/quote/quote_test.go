package quote

import (
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/internal/testtools"
)

func testCert(t *testing.T) []byte { return testtools.SelfSignedCA(t) }

func TestValue(t *testing.T) {
	der := testCert(t)
	pemCA := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	b64 := base64.StdEncoding.EncodeToString(pemCA)
	key := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: []byte("secret key bytes")})
	tests := []struct{ name, in, want string }{
		{"short", "10.0.0.256", `"10.0.0.256"`},
		{"empty", "", `""`},
		{"control characters escaped", "a\nb\x1b\u0085\xff", `"a\nb\x1b\u0085\xff"`},
		{"long", strings.Repeat("c", 60000), `"` + strings.Repeat("c", 40) + `"…(60000 bytes)`},
		{"long, cut at a rune", strings.Repeat("a", 39) + "é" + strings.Repeat("b", 10), `"` + strings.Repeat("a", 39) + `"…(51 bytes)`},
		{"base64 PEM CA", b64, "a certificate (not shown)"},
		{"base64 PEM CA with line breaks", b64[:64] + "\n" + b64[64:], "a certificate (not shown)"},
		{"base64 PEM CA cut short", b64[:200] + "!", "a certificate (not shown)"},
		{"base64 DER", base64.StdEncoding.EncodeToString(der), "a certificate (not shown)"},
		{"raw base64 DER", base64.RawURLEncoding.EncodeToString(der), "a certificate (not shown)"},
		{"PEM text", string(pemCA), "a certificate (not shown)"},
		{"DER bytes", string(der), "a certificate (not shown)"},
		{"CA after a prefix", "https://" + b64, "a certificate (not shown)"},
		{"base64 private key", base64.StdEncoding.EncodeToString(key), "a PEM block (not shown)"},
		{"private key text", string(key), "a PEM block (not shown)"},
		{"ordinary base64", "aGVsbG8gd29ybGQ=", `"aGVsbG8gd29ybGQ="`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Value(tc.in)
			if got != tc.want {
				t.Errorf("Value = %s, want %s", got, tc.want)
			}
			if len(got) > MaxBytes*4+30 {
				t.Errorf("Value is %d bytes long", len(got))
			}
		})
	}
}

func TestList(t *testing.T) {
	var p []string
	for i := range 5000 {
		p = append(p, fmt.Sprintf("problem %d", i))
	}
	if got, want := List(p), "problem 0; problem 1; problem 2; problem 3; problem 4; problem 5; problem 6; problem 7; problem 8; problem 9; and 4990 more"; got != want {
		t.Errorf("List = %q, want %q", got, want)
	}
	if got := List(p[:2]); got != "problem 0; problem 1" {
		t.Errorf("List = %q", got)
	}
}

func TestName(t *testing.T) {
	for in, want := range map[string]string{
		"InstanceIdNodeName":      "InstanceIdNodeName",
		"max-pods_2.x":            "max-pods_2.x",
		"":                        `""`,
		"a b":                     `"a b"`,
		"a\nb":                    `"a\nb"`,
		strings.Repeat("k", 5000): `"` + strings.Repeat("k", 40) + `"…(5000 bytes)`,
	} {
		if got := Name(in); got != want {
			t.Errorf("Name(%q) = %s, want %s", in, got, want)
		}
	}
}
