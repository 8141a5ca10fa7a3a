package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/internal/genfile"
)

const (
	csvFile = "../../../assets/eni-limits.csv"
	txtFile = "../../../assets/eni-max-pods.txt"
	goFile  = "../../zz_generated_table.go"
)

// TestGeneratedFileIsFresh regenerates the table in memory and compares it byte for
// byte with the committed file, so `make test` fails when the data changed but the
// table was not regenerated (or the file was edited by hand).
func TestGeneratedFileIsFresh(t *testing.T) {
	csvData, txtData := read(t, csvFile), read(t, txtFile)
	want, err := generate(csvData, txtData)
	if err != nil {
		t.Fatal(err)
	}
	if err := genfile.WriteOrCheck(goFile, want, true, "its inputs changed", "make generate"); err != nil {
		t.Fatal(err)
	}
	if again, _ := generate(csvData, txtData); !bytes.Equal(again, want) {
		t.Error("generate is not deterministic")
	}
}

func TestGenerateRejectsBadData(t *testing.T) {
	const header = "instance_type,enis,ipv4_per_eni,hypervisor,bare_metal,vcpus,memory_mib,classic_max_pods\n"
	const txt = "# header\nm5.large 29\n"
	tests := []struct {
		name, csv, txt, wantErr string
	}{
		{"classic mismatch", header + "m5.large,3,10,nitro,false,2,8192,30\n", txt, "eni-limits.csv:2: m5.large: classic_max_pods 30, but 3*(10-1)+2 = 29"},
		{"bad hypervisor", header + "m5.large,3,10,kvm,false,2,8192,29\n", txt, `eni-limits.csv:2: hypervisor "kvm": want nitro, xen or unknown`},
		{"bad bare_metal", header + "m5.large,3,10,nitro,yes,2,8192,29\n", txt, `eni-limits.csv:2: bare_metal "yes": want true or false`},
		{"zero ENIs", header + "m5.large,0,10,nitro,false,2,8192,2\n", txt, `eni-limits.csv:2: enis "0": want a whole number from 1 to 255`},
		{"duplicate type", header + "m5.large,3,10,nitro,false,2,8192,29\nm5.large,3,10,nitro,false,2,8192,29\n", txt, "eni-limits.csv:3: duplicate instance type m5.large"},
		{"bad name", header + "M5.large,3,10,nitro,false,2,8192,29\n", txt, `eni-limits.csv:2: instance type "M5.large": want <family>.<size> in lower-case letters, digits and '-'`},
		{"missing column", "instance_type,enis\nm5.large,3\n", txt, `eni-limits.csv: no column "ipv4_per_eni" in the header`},
		{"txt: two spaces", header + "m5.large,3,10,nitro,false,2,8192,29\n", "m5.large  29\n", `eni-max-pods.txt:1: max pods of m5.large: want a whole number from 1 to 65535, got " 29"`},
		{"txt: duplicate", header + "m5.large,3,10,nitro,false,2,8192,29\n", "m5.large 29\nm5.large 29\n", "eni-max-pods.txt:2: duplicate instance type m5.large"},
		{"txt: empty", header + "m5.large,3,10,nitro,false,2,8192,29\n", "# only a comment\n", "eni-max-pods.txt: no data rows"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := generate([]byte(tc.csv), []byte(tc.txt))
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("generate error = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestGenerateSmallTable(t *testing.T) {
	const csvData = "instance_type,enis,ipv4_per_eni,hypervisor,bare_metal,vcpus,memory_mib,classic_max_pods\n" +
		"m5.large,3,10,nitro,false,2,8192,29\nc5.metal,15,50,unknown,true,96,196608,737\nm4.xlarge,4,15,xen,false,4,,58\n"
	src, err := generate([]byte(csvData), []byte("m5.large 29\nzz9.large 17\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"c5.metalm4.xlargem5.largezz9.large"`,
		"{off: 0, n: 8, maxPods: 737, vcpus: 96, memMiB: 196608, enis: 15, ipv4: 50, flags: fFacts | fMetal},",
		"{off: 8, n: 9, maxPods: 58, vcpus: 4, memMiB: 0, enis: 4, ipv4: 15, flags: fFacts | fXen},",
		"{off: 17, n: 8, maxPods: 29, vcpus: 2, memMiB: 8192, enis: 3, ipv4: 10, flags: fFacts | fNitro},",
		"{off: 25, n: 9, maxPods: 17, vcpus: 0, memMiB: 0, enis: 0, ipv4: 0, flags: 0},",
		"var sorted = [4]uint16{",
	} {
		if !strings.Contains(string(src), want) {
			t.Errorf("generated source lacks %q:\n%s", want, src)
		}
	}
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
