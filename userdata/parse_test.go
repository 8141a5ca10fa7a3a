package userdata

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const samples = "../testdata/userdata"

func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestParseSamples checks the parts found in every sample.
func TestParseSamples(t *testing.T) {
	want := map[string]string{
		"01": "text/x-shellscript",
		"02": "text/x-shellscript text/x-shellscript text/x-shellscript",
		"03": "text/x-shellscript text/x-shellscript text/x-shellscript",
		"04": "text/cloud-config",
		"05": "text/x-shellscript",
		"06": "text/x-shellscript",
		"07": "text/x-shellscript text/x-shellscript",
		"08": "application/node.eks.aws",
		"09": "application/node.eks.aws text/x-shellscript application/node.eks.aws",
		"10": "application/node.eks.aws",
		"11": "application/node.eks.aws application/node.eks.aws text/x-shellscript",
		"12": "text/x-shellscript application/node.eks.aws application/node.eks.aws",
		"13": "application/node.eks.aws application/node.eks.aws",
		"14": "application/node.eks.aws",
		"15": "text/cloud-boothook text/x-shellscript",
		"16": "text/x-shellscript",
	}
	files, _ := filepath.Glob(filepath.Join(samples, "*.userdata*"))
	if len(files) != len(want) {
		t.Fatalf("%d samples, want %d", len(files), len(want))
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			parts, err := Parse(b)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for i, p := range parts {
				got = append(got, p.ContentType)
				if p.Index != i+1 {
					t.Errorf("part %d has index %d", i+1, p.Index)
				}
				if bytes.HasPrefix(bytes.TrimSpace(p.Body), []byte("--")) && p.ContentType != TypeNodeConfig {
					t.Errorf("%s starts with a delimiter: %.40q", p.Name(), p.Body)
				}
			}
			if g := strings.Join(got, " "); g != want[name[:2]] {
				t.Errorf("parts %q, want %q", g, want[name[:2]])
			}
		})
	}
}

func TestParseLayers(t *testing.T) {
	script := []byte("#!/bin/bash\necho hi\n")
	mime := []byte("Content-Type: multipart/mixed; boundary=XX\r\n\r\n--XX\r\nContent-Type: text/x-shellscript\r\nContent-Transfer-Encoding: base64\r\n\r\n" +
		base64.StdEncoding.EncodeToString(script) + "\r\n--XX\r\nContent-Type: application/node.eks.aws\r\n\r\n" +
		string(gz(t, []byte("kind: NodeConfig\n"))) + "\r\n--XX--\r\n")
	for _, tc := range []struct {
		name string
		in   []byte
		want string // content types, then the first body
	}{
		{"plain script", script, "text/x-shellscript"},
		{"gzip", gz(t, script), "text/x-shellscript"},
		{"base64", []byte(base64.StdEncoding.EncodeToString(script)), "text/x-shellscript"},
		{"base64 of gzip", []byte(base64.StdEncoding.EncodeToString(gz(t, script))), "text/x-shellscript"},
		{"multipart with base64 and gzip parts", mime, "text/x-shellscript application/node.eks.aws"},
		{"gzip of multipart", gz(t, mime), "text/x-shellscript application/node.eks.aws"},
		{"cloud-config", []byte("#cloud-config\nruncmd: []\n"), "text/cloud-config"},
		// eksctl's managed AL2 user data: an unquoted boundary with '/', which
		// cloud-init reads and RFC 2045 (so mime.ParseMediaType) does not allow.
		{"unquoted boundary=//", []byte("MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=//\n\n--//\nContent-Type: text/x-shellscript\n\n" +
			string(script) + "--//\nContent-Type: text/x-shellscript\n\necho two\n--//--\n"), "text/x-shellscript text/x-shellscript"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parts, err := Parse(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range parts {
				got = append(got, p.ContentType)
			}
			if g := strings.Join(got, " "); g != tc.want {
				t.Errorf("got %q, want %q", g, tc.want)
			}
			if tc.want == "text/x-shellscript" && !bytes.Equal(parts[0].Body, script) {
				t.Errorf("body %q, want %q", parts[0].Body, script)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	bomb := gz(t, make([]byte, 8<<20))
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"over 64 KiB", bytes.Repeat([]byte("#"), MaxUserData+1), "user data: 65537 bytes, more than the 65536 allowed"},
		{"gzip bomb", bomb, "user data: gzip: decoded data over the 1048576-byte limit (a gzip bomb?)"},
		{"broken gzip", []byte{0x1f, 0x8b, 8, 0, 0, 0}, "user data: gzip: unexpected EOF"},
		{"no boundary", []byte("Content-Type: multipart/mixed\n\nhello\n"), "part 1: multipart Content-Type without a boundary"},
		{"no delimiter", []byte("Content-Type: multipart/mixed; boundary=B\n\nhello\n"), `part 1: multipart document without a "--B" delimiter line`},
		{
			"bad part base64", []byte("Content-Type: multipart/mixed; boundary=B\n\n--B\nContent-Type: text/x-shellscript\nContent-Transfer-Encoding: base64\n\n!!!notbase64\n--B--\n"),
			"part 1 (text/x-shellscript): Content-Transfer-Encoding base64: illegal base64 data at input byte 0",
		},
		{
			"bad part gzip", []byte("Content-Type: multipart/mixed; boundary=B\n\n--B\nContent-Type: application/node.eks.aws\n\n\x1f\x8b\x08junk\n--B--\n"),
			"part 1 (application/node.eks.aws): gzip: unexpected EOF",
		},
		{
			"unknown encoding", []byte("Content-Type: multipart/mixed; boundary=B\n\n--B\nContent-Type: text/plain\nContent-Transfer-Encoding: uuencode\n\nx\n--B--\n"),
			`part 1 (text/plain): Content-Transfer-Encoding "uuencode": want 7bit, 8bit, binary, base64 or quoted-printable`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.in)
			if err == nil || err.Error() != tc.want {
				t.Errorf("error %v\nwant %s", err, tc.want)
			}
		})
	}
}
