package maxpods

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// maxRowPods bounds a row's max pods (far above any ENI formula's value).
const maxRowPods = 65535

// Row is one "<instance-type> <max-pods>" row of an eni-max-pods.txt file.
type Row struct {
	Line         int // 1-based line number
	InstanceType string
	MaxPods      int
}

// RowError is a line of an eni-max-pods.txt file that is not a valid row; callers
// report it with the file's name ("FILE:LINE: REASON").
type RowError struct {
	Line   int    // 1-based line number
	Reason string // what is wrong, naming the value
}

// ParseRows parses an eni-max-pods.txt file as bootstrap.sh's awk read it: blank
// lines and '#' comments are skipped, fields are separated by spaces or tabs. Every
// other line must be "<instance-type> <max-pods>" with a valid instance-type name and
// a max pods from 1 to 65535; a line that is not, or that repeats an earlier row's
// type, is returned in bad (the earlier row stands) and the parse goes on, so one bad
// line never hides the good ones.
func ParseRows(data []byte) (rows []Row, bad []*RowError) {
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.Fields(text)
		if len(f) != 2 {
			bad = append(bad, &RowError{line, fmt.Sprintf("want \"<instance-type> <max-pods>\", got %q", excerpt(text))})
			continue
		}
		if err := CheckInstanceType(f[0]); err != nil {
			bad = append(bad, &RowError{line, err.Error()})
			continue
		}
		n, err := strconv.Atoi(f[1])
		if err != nil || n < 1 || n > maxRowPods {
			bad = append(bad, &RowError{line, fmt.Sprintf("max pods of %s: want a whole number from 1 to %d, got %q", f[0], maxRowPods, excerpt(f[1]))})
			continue
		}
		if first, dup := seen[f[0]]; dup {
			bad = append(bad, &RowError{line, fmt.Sprintf("%s is already on line %d (that row is used)", f[0], first)})
			continue
		}
		seen[f[0]] = line
		rows = append(rows, Row{Line: line, InstanceType: f[0], MaxPods: n})
	}
	if err := sc.Err(); err != nil {
		bad = append(bad, &RowError{line + 1, fmt.Sprintf("unreadable: %v", err)})
	}
	return rows, bad
}

// excerpt shortens s for a message.
func excerpt(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

// maxNameLen bounds an instance-type name (the longest today has 19 bytes).
const maxNameLen = 64

// CheckInstanceType checks that s is an EC2 instance-type name: "<family>.<size>",
// lower-case letters, digits and single inner '-' on either side of one '.', at most
// 64 bytes (e.g. m5.large, u-6tb1.metal, c6in.metal-32xl).
func CheckInstanceType(s string) error {
	bad := func(why string) error {
		return fmt.Errorf("instance type %q: %s; want <family>.<size> such as m5.large", excerpt(s), why)
	}
	switch {
	case s == "":
		return fmt.Errorf("instance type is empty; want <family>.<size> such as m5.large")
	case len(s) > maxNameLen:
		return bad(fmt.Sprintf("longer than %d bytes", maxNameLen))
	}
	family, size, ok := strings.Cut(s, ".")
	if !ok {
		return bad("no '.'")
	}
	for _, part := range []string{family, size} {
		if part == "" || part[0] == '-' || part[len(part)-1] == '-' || strings.Contains(part, "--") {
			return bad("empty part or misplaced '-'")
		}
		for i := 0; i < len(part); i++ {
			if c := part[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
				return bad(fmt.Sprintf("%q is not allowed", rune(c)))
			}
		}
	}
	return nil
}
