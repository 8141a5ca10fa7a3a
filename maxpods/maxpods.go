// Package maxpods works out the kubelet maxPods value for an EC2 instance type, as
// bootstrap.sh does: first from the embedded eni-max-pods.txt table, then, for types
// the table does not know, from the instance type's EC2 networking facts with the
// classic secondary-IP formula of max-pods-calculator.sh.
//
// Everything here is pure: no network, no disk. Fetching the EC2 facts is the job of
// package ec2api.
package maxpods

import (
	"bufio"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/eksboot/eksboot/assets"
)

// Default is the value used when neither the table nor EC2 knows the type (kubelet's
// own default).
const Default = 110

// table is the embedded eni-max-pods.txt, parsed on first use. A malformed row is a
// defect of the embedded asset, not a runtime condition, so it panics.
var table = sync.OnceValue(func() map[string]int {
	t, err := parseTable(assets.ENIMaxPods)
	if err != nil {
		panic("maxpods: embedded eni-max-pods.txt: " + err.Error())
	}
	return t
})

// Lookup returns the max pods for instanceType from the embedded eni-max-pods.txt,
// by exact match: no trimming, no case folding, no prefix match. (bootstrap.sh's awk
// lookup is an unanchored regex prefix match, a known quirk this fixes.) The second
// result is false when the table has no row for instanceType.
func Lookup(instanceType string) (int, bool) {
	n, ok := table()[instanceType]
	return n, ok
}

// parseTable parses eni-max-pods.txt: '#' comment lines, blank lines, and
// "<instance-type> <max-pods>" rows with a positive max pods and no duplicate type.
func parseTable(s string) (map[string]int, error) {
	t := make(map[string]int, 1500)
	sc := bufio.NewScanner(strings.NewReader(s))
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		name, num, ok := strings.Cut(text, " ")
		if !ok || name == "" || strings.ContainsAny(num, " \t") {
			return nil, fmt.Errorf("line %d: want \"<instance-type> <max-pods>\", got %q", line, text)
		}
		n, err := strconv.Atoi(num)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("line %d: max pods of %s: want a positive integer, got %q", line, name, num)
		}
		if _, dup := t[name]; dup {
			return nil, fmt.Errorf("line %d: duplicate instance type %s", line, name)
		}
		t[name] = n
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading table: %w", err)
	}
	if len(t) == 0 {
		return nil, errors.New("no data rows")
	}
	return t, nil
}
