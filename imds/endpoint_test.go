package imds

import (
	"strings"
	"testing"
)

// No test here sends a request: ResolveEndpoint only reads strings.

func TestResolveEndpoint(t *testing.T) {
	tests := []struct {
		name    string
		flag    string
		sdkEnv  string // AWS_EC2_METADATA_SERVICE_ENDPOINT
		bootEnv string // IMDS_ENDPOINT
		want    string
		wantErr string // substring of the error; "" for success
	}{
		{name: "nothing set", want: ""},
		{name: "flag", flag: "http://127.0.0.1:1338", want: "http://127.0.0.1:1338"},
		{name: "flag trailing slash", flag: "http://127.0.0.1:1338/", want: "http://127.0.0.1:1338"},
		{name: "flag https upper-case scheme", flag: "HTTPS://imds.example:8443", want: "https://imds.example:8443"},
		{name: "flag wins", flag: "http://127.0.0.1:1", sdkEnv: "http://127.0.0.1:2", bootEnv: "127.0.0.1:3", want: "http://127.0.0.1:1"},
		{name: "sdk variable", sdkEnv: "http://[fd00:ec2::254]", want: "http://[fd00:ec2::254]"},
		{name: "sdk variable wins over bootstrap's", sdkEnv: "http://127.0.0.1:2", bootEnv: "127.0.0.1:3", want: "http://127.0.0.1:2"},
		{name: "bootstrap host", bootEnv: "169.254.169.254", want: "http://169.254.169.254"},
		{name: "bootstrap host:port", bootEnv: "127.0.0.1:8080", want: "http://127.0.0.1:8080"},
		{name: "bootstrap ipv6 host:port", bootEnv: "[fd00:ec2::254]:80", want: "http://[fd00:ec2::254]:80"},
		{name: "bootstrap with scheme", bootEnv: "https://127.0.0.1:8443", want: "https://127.0.0.1:8443"},

		{name: "flag without scheme", flag: "127.0.0.1:1338", wantErr: `--imds-endpoint flag "127.0.0.1:1338"`},
		{name: "flag ftp", flag: "ftp://127.0.0.1", wantErr: "--imds-endpoint flag"},
		{name: "flag path", flag: "http://127.0.0.1/latest/meta-data", wantErr: "path"},
		{name: "flag query", flag: "http://127.0.0.1?x=1", wantErr: "query"},
		{name: "flag empty query", flag: "http://127.0.0.1?", wantErr: "query"},
		{name: "flag fragment", flag: "http://127.0.0.1#x", wantErr: "fragment"},
		{name: "flag user info", flag: "http://u:p@127.0.0.1", wantErr: "user info"},
		{name: "flag no host", flag: "http://", wantErr: "no host"},
		{name: "flag port only", flag: "http://:80", wantErr: "no host"},
		{name: "flag opaque", flag: "http:127.0.0.1", wantErr: "no host"},
		{name: "flag port too big", flag: "http://127.0.0.1:99999", wantErr: "bad port"},
		{name: "flag port zero", flag: "http://127.0.0.1:0", wantErr: "bad port"},
		{name: "flag empty port", flag: "http://127.0.0.1:", wantErr: "empty port"},
		{name: "flag space", flag: "http://127.0.0.1 :80", wantErr: "not a URL"},
		{name: "bad sdk variable", sdkEnv: "http://127.0.0.1/x", wantErr: "AWS_EC2_METADATA_SERVICE_ENDPOINT"},
		{name: "bad sdk variable no scheme", sdkEnv: "127.0.0.1", wantErr: "AWS_EC2_METADATA_SERVICE_ENDPOINT"},
		{name: "bad bootstrap variable", bootEnv: "fd00:ec2::254", wantErr: `IMDS_ENDPOINT "http://fd00:ec2::254"`},
		{name: "bad bootstrap variable path", bootEnv: "127.0.0.1/latest", wantErr: "IMDS_ENDPOINT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{
				"AWS_EC2_METADATA_SERVICE_ENDPOINT": tt.sdkEnv,
				"IMDS_ENDPOINT":                     tt.bootEnv,
			}
			got, err := ResolveEndpoint(tt.flag, func(k string) string { return env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "imds: ") {
					t.Fatalf("ResolveEndpoint = %q, %v; want an error containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ResolveEndpoint = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestResolveEndpointNilGetenv(t *testing.T) {
	t.Setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", "")
	t.Setenv("IMDS_ENDPOINT", "127.0.0.1:9")
	got, err := ResolveEndpoint("", nil)
	if err != nil || got != "http://127.0.0.1:9" {
		t.Fatalf("ResolveEndpoint(\"\", nil) = %q, %v; want http://127.0.0.1:9", got, err)
	}
}

// TestResolveEndpointErrorsQuoteAShortPrefix: a CA (or any long value) given as
// the endpoint is never echoed: at most a short prefix, and a certificate not at all.
func TestResolveEndpointErrorsQuoteAShortPrefix(t *testing.T) {
	ca := "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ" + strings.Repeat("A", 2000) + "\n-----END CERTIFICATE-----\n"
	for name, value := range map[string]string{
		"a CA":             ca,
		"a long host":      "http://" + strings.Repeat("a", 10<<10),
		"a long path":      "http://127.0.0.1/" + strings.Repeat("p", 10<<10),
		"a long bad port":  "http://127.0.0.1:" + strings.Repeat("9", 10<<10),
		"control bytes":    "http://127.0.0.1/\x1b[31mred",
		"a long bootstrap": strings.Repeat("h", 10<<10) + "/x",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ResolveEndpoint(value, func(string) string { return "" })
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if len(msg) > 300 || strings.Contains(msg, "BEGIN CERTIFICATE") || strings.Contains(msg, "\x1b") {
				t.Errorf("error of %d bytes quotes too much: %.300q", len(msg), msg)
			}
			if !strings.Contains(msg, EndpointFlag) {
				t.Errorf("error %q does not name the flag", msg)
			}
		})
	}
}
