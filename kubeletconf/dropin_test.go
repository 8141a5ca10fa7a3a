package kubeletconf

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coreos/go-systemd/v22/unit"

	"github.com/eksboot/eksboot/unitenv/unitenvtest"
)

func TestEnvDropInGolden(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(bootstrapDir, c.name, dropInDir)

			got, err := EnvDropIn(KubeletArgsVar, c.kubeletArgs())
			if err != nil {
				t.Fatal(err)
			}
			if want := readTestdata(t, filepath.Join(dir, KubeletArgsDropIn)); !bytes.Equal(got, want) {
				t.Errorf("%s:\ngot:  %q\nwant: %q", KubeletArgsDropIn, got, want)
			}

			extraPath := filepath.Join(dir, KubeletExtraArgsDropIn)
			if c.extraArgs == "" {
				if _, err := os.Stat(extraPath); !os.IsNotExist(err) {
					t.Errorf("%s exists but the case has no extra args (err %v)", extraPath, err)
				}
				return
			}
			got, err = EnvDropIn(KubeletExtraArgsVar, c.extraArgs)
			if err != nil {
				t.Fatal(err)
			}
			if want := readTestdata(t, extraPath); !bytes.Equal(got, want) {
				t.Errorf("%s:\ngot:  %q\nwant: %q", KubeletExtraArgsDropIn, got, want)
			}
		})
	}
}

// TestEnvDropInRoundTrip renders values that bootstrap.sh's single quotes break
// and checks that systemd's parsing of the drop-in gives back NAME=value exactly.
func TestEnvDropInRoundTrip(t *testing.T) {
	tests := []struct {
		name      string
		value     string
		wantQuote byte // the quote the assignment must use
	}{
		{"plain", "--node-labels=a=b --v=2", '\''},
		{"empty", "", '\''},
		{"double quotes", `--eviction-hard="memory.available<200Mi"`, '\''},
		{"dollar", "--node-labels=cost=$5 $HOME ${X}", '\''},
		{"unicode", "--node-labels=team=équipe-☃ 日本", '\''},
		{"single quote", "--node-labels=owner=o'brien", '"'},
		{"both quotes", `--x='a' --y="b"`, '"'},
		{"percent", "--eviction-hard=nodefs.available<10% --x=%n %% %", '"'},
		{"backslash", `--root-dir=C:\kubelet \\server\share`, '"'},
		{"trailing backslash", `--x=a\`, '"'},
		{"escape lookalikes", `\n \t \x41 \u00e9 \'`, '"'},
		{"tab", "--a=1\t--b=2", '"'},
		{"leading and trailing spaces", "  --a=1  ", '\''},
		{"everything", "'\"\\%$\t é ; # =", '"'},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			const name = KubeletExtraArgsVar
			got, err := EnvDropIn(name, tc.value)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("testdata", "dropin", strings.ReplaceAll(tc.name, " ", "-")+".conf"), got)

			opts, err := unit.DeserializeOptions(bytes.NewReader(got))
			if err != nil {
				t.Fatalf("unit.DeserializeOptions: %v", err)
			}
			if len(opts) != 1 || opts[0].Section != "Service" || opts[0].Name != "Environment" {
				t.Fatalf("options = %v, want one [Service] Environment=", opts)
			}
			if q := opts[0].Value[0]; q != tc.wantQuote {
				t.Errorf("assignment %s is quoted with %c, want %c", opts[0].Value, q, tc.wantQuote)
			}
			words, err := unitenvtest.Parse(opts[0].Value)
			if err != nil {
				t.Fatalf("systemd would reject Environment=%s: %v", opts[0].Value, err)
			}
			if want := name + "=" + tc.value; len(words) != 1 || words[0] != want {
				t.Errorf("systemd sets %q, want [%q]", words, want)
			}
		})
	}
}

func TestEnvDropInLongValue(t *testing.T) {
	value := strings.Repeat("--node-labels=k=v,", 100) + "%"
	got, err := EnvDropIn("X", value)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimPrefix(strings.Split(string(got), "\n")[1], "Environment=")
	words, err := unitenvtest.Parse(line)
	if err != nil || len(words) != 1 || words[0] != "X="+value {
		t.Errorf("parseEnvironment = %q, %v; want [X=%s]", words, err, value)
	}
}

func TestEnvDropInErrors(t *testing.T) {
	tests := []struct {
		name    string
		varName string
		value   string
		wantErr string
	}{
		{"newline", "KUBELET_ARGS", "--node-ip=fd00::1\nfd00::2", "environment variable KUBELET_ARGS: value has control character U+000A at byte 17; newlines, NUL and control characters other than tab are not allowed"},
		{"carriage return", "A", "x\r", "environment variable A: value has control character U+000D at byte 1; newlines, NUL and control characters other than tab are not allowed"},
		{"NUL", "A", "x\x00y", "environment variable A: value has control character U+0000 at byte 1; newlines, NUL and control characters other than tab are not allowed"},
		{"escape", "A", "\x1b[31m", "environment variable A: value has control character U+001B at byte 0; newlines, NUL and control characters other than tab are not allowed"},
		{"DEL", "A", "\x7f", "environment variable A: value has control character U+007F at byte 0; newlines, NUL and control characters other than tab are not allowed"},
		{"C1 control", "A", "\u0085", "environment variable A: value has control character U+0085 at byte 0; newlines, NUL and control characters other than tab are not allowed"},
		{"invalid UTF-8", "A", "\xff", "environment variable A: value is not valid UTF-8"},
		{"empty name", "", "x", "environment variable name is empty"},
		{"leading digit", "1A", "x", `environment variable name "1A" is invalid: it must be a letter or '_' followed by letters, digits or '_'`},
		{"dash", "KUBELET-ARGS", "x", `environment variable name "KUBELET-ARGS" is invalid: it must be a letter or '_' followed by letters, digits or '_'`},
		{"equals", "A=B", "x", `environment variable name "A=B" is invalid: it must be a letter or '_' followed by letters, digits or '_'`},
		{"non-ASCII", "É", "x", `environment variable name "É" is invalid: it must be a letter or '_' followed by letters, digits or '_'`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := EnvDropIn(tc.varName, tc.value)
			if err == nil {
				t.Fatalf("EnvDropIn(%q, %q) = %q, want error", tc.varName, tc.value, got)
			}
			if err.Error() != tc.wantErr {
				t.Errorf("error = %q, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestEnvDropInNames(t *testing.T) {
	for _, name := range []string{"A", "_", "_A1", "KUBELET_EXTRA_ARGS", "a9"} {
		t.Run(name, func(t *testing.T) {
			if _, err := EnvDropIn(name, "x"); err != nil {
				t.Errorf("EnvDropIn(%q): %v", name, err)
			}
		})
	}
}
