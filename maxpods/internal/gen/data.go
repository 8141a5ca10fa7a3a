package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
)

// typeRow is what the table keeps about one instance type.
type typeRow struct {
	name      string
	maxPods   int  // eni-max-pods.txt's number, else the classic formula
	facts     bool // enis, ipv4, vcpus, hypervisor and bareMetal are known
	enis      int
	ipv4      int
	vcpus     int    // 0 when unknown
	memMiB    int    // memory in MiB; 0 when unknown
	hyper     string // nitro, xen or ""
	bareMetal bool
}

// csvColumns are the columns of eni-limits.csv the table uses.
var csvColumns = []string{"instance_type", "enis", "ipv4_per_eni", "hypervisor", "bare_metal", "vcpus", "memory_mib", "classic_max_pods"}

// parseCSV reads eni-limits.csv: one row of facts per instance type, with a header
// naming the columns (see ../shared/docs/maxpods-notes.md §1). It checks every value it
// keeps, and that classic_max_pods is the classic formula of enis and ipv4_per_eni.
func parseCSV(data []byte) (map[string]*typeRow, error) {
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("eni-limits.csv: %w", err)
	}
	if len(recs) < 2 {
		return nil, fmt.Errorf("eni-limits.csv: no data rows")
	}
	col := map[string]int{}
	for i, name := range recs[0] {
		col[name] = i
	}
	for _, c := range csvColumns {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("eni-limits.csv: no column %q in the header", c)
		}
	}
	types := map[string]*typeRow{}
	for i, rec := range recs[1:] {
		line := i + 2
		get := func(c string) string { return rec[col[c]] }
		num := func(c string, lo, hi int, empty bool) (int, error) {
			s := get(c)
			if s == "" && empty {
				return 0, nil
			}
			n, err := strconv.Atoi(s)
			if err != nil || n < lo || n > hi {
				return 0, fmt.Errorf("eni-limits.csv:%d: %s %q: want a whole number from %d to %d", line, c, s, lo, hi)
			}
			return n, nil
		}
		t := &typeRow{name: get("instance_type"), facts: true}
		if err := checkName(t.name); err != nil {
			return nil, fmt.Errorf("eni-limits.csv:%d: %w", line, err)
		}
		if _, dup := types[t.name]; dup {
			return nil, fmt.Errorf("eni-limits.csv:%d: duplicate instance type %s", line, t.name)
		}
		var classic int
		for _, v := range []struct {
			dst       *int
			col       string
			lo, hi    int
			mayBeNone bool
		}{
			{&t.enis, "enis", 1, 255, false},
			{&t.ipv4, "ipv4_per_eni", 1, 255, false},
			{&t.vcpus, "vcpus", 1, 65535, true},
			{&t.memMiB, "memory_mib", 1, 1<<32 - 1, true},
			{&classic, "classic_max_pods", 1, 65535, false},
		} {
			if *v.dst, err = num(v.col, v.lo, v.hi, v.mayBeNone); err != nil {
				return nil, err
			}
		}
		switch h := get("hypervisor"); h {
		case "nitro", "xen":
			t.hyper = h
		case "unknown", "":
		default:
			return nil, fmt.Errorf("eni-limits.csv:%d: hypervisor %q: want nitro, xen or unknown", line, h)
		}
		switch b := get("bare_metal"); b {
		case "true", "false":
			t.bareMetal = b == "true"
		default:
			return nil, fmt.Errorf("eni-limits.csv:%d: bare_metal %q: want true or false", line, b)
		}
		if want := t.enis*(t.ipv4-1) + 2; classic != want {
			return nil, fmt.Errorf("eni-limits.csv:%d: %s: classic_max_pods %d, but %d*(%d-1)+2 = %d", line, t.name, classic, t.enis, t.ipv4, want)
		}
		t.maxPods = classic
		types[t.name] = t
	}
	return types, nil
}

// parseTXT reads eni-max-pods.txt strictly: '#' comments, blank lines and
// "<instance-type> <max-pods>" rows with one space, a positive number and no
// duplicate type.
func parseTXT(data []byte) (map[string]int, error) {
	rows := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		name, num, ok := strings.Cut(text, " ")
		n, err := strconv.Atoi(num)
		switch {
		case !ok || checkName(name) != nil:
			return nil, fmt.Errorf("eni-max-pods.txt:%d: want \"<instance-type> <max-pods>\", got %q", line, text)
		case err != nil || n < 1 || n > 65535:
			return nil, fmt.Errorf("eni-max-pods.txt:%d: max pods of %s: want a whole number from 1 to 65535, got %q", line, name, num)
		}
		if _, dup := rows[name]; dup {
			return nil, fmt.Errorf("eni-max-pods.txt:%d: duplicate instance type %s", line, name)
		}
		rows[name] = n
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("eni-max-pods.txt: %w", err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("eni-max-pods.txt: no data rows")
	}
	return rows, nil
}

// checkName accepts lower-case letters, digits, '-' and exactly one inner '.'.
func checkName(s string) error {
	family, size, ok := strings.Cut(s, ".")
	if !ok || family == "" || size == "" || len(s) > 64 || strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789-.") != "" || strings.Contains(size, ".") {
		return fmt.Errorf("instance type %q: want <family>.<size> in lower-case letters, digits and '-'", s)
	}
	return nil
}
