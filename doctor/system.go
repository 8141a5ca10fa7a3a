package doctor

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"time"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
)

// DBusUnits reads unit state from systemd over D-Bus with go-systemd (the system
// bus; DBUS_SYSTEM_BUS_ADDRESS points tests at a private manager), one connection
// per doctor run, opened on first use.
type DBusUnits struct {
	conn *sddbus.Conn
	err  error
}

// Unit implements Units: the unit's LoadState, ActiveState, SubState and
// ActiveEnterTimestamp, and the service's Result, ExecMainStatus and NRestarts.
func (u *DBusUnits) Unit(ctx context.Context, name string) (UnitState, error) {
	if u.conn == nil && u.err == nil {
		u.conn, u.err = sddbus.NewWithContext(context.WithoutCancel(ctx))
	}
	if u.err != nil {
		return UnitState{}, fmt.Errorf("connect to systemd: %w", u.err)
	}
	props, err := u.conn.GetUnitPropertiesContext(ctx, name)
	if err != nil {
		return UnitState{}, err
	}
	s := UnitState{
		LoadState:   str(props["LoadState"]),
		ActiveState: str(props["ActiveState"]),
		SubState:    str(props["SubState"]),
	}
	if us, ok := props["ActiveEnterTimestamp"].(uint64); ok && us > 0 {
		s.ActiveEnter = time.UnixMicro(int64(us))
	}
	if s.LoadState == "not-found" {
		return s, nil
	}
	svc, err := u.conn.GetUnitTypePropertiesContext(ctx, name, "Service")
	if err != nil {
		return s, err
	}
	s.Result = str(svc["Result"])
	if v, ok := svc["ExecMainStatus"].(int32); ok {
		s.ExecMainStatus = int(v)
	}
	if v, ok := svc["NRestarts"].(uint32); ok {
		s.NRestarts = int(v)
	}
	return s, nil
}

// Close closes the connection.
func (u *DBusUnits) Close() {
	if u.conn != nil {
		u.conn.Close()
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// JournalCtl reads the journal through `journalctl -o json`, journald's stable JSON
// export format (one object per line; docs: systemd.journal-fields and the Journal
// JSON Format). go-systemd's sdjournal would read the files in-process, but it loads
// libsystemd with dlopen through cgo, and eksboot is built with CGO_ENABLED=0; the
// journal's binary file format is not a stable interface to parse by hand. journalctl
// is on every image that has journald.
type JournalCtl struct {
	// Path is the journalctl binary ("journalctl" on PATH when empty).
	Path string
	// Args come before eksboot's own: --root DIR for a root other than /, or
	// --file/--directory for a recorded journal.
	Args []string
}

// Bounds of journalctl's output: doctor asks for n entries, each one line of JSON
// (journald keeps a stdout line to 48 KiB, LineMax), and reads at most
// journalOutputLimit bytes of lines of at most journalLineLimit, keeping the last n
// entries whatever journalctl prints.
const (
	journalOutputLimit = 16 << 20
	journalLineLimit   = 1 << 20
)

// Entries implements Journal. It reads journalctl's output as it comes, through
// the bounds above, and stops journalctl at the first of them.
func (j JournalCtl) Entries(ctx context.Context, unit string, n int) ([]JournalEntry, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	args := append(append([]string{}, j.Args...), "--output=json", "--no-pager", "--quiet",
		"--unit="+unit, "--lines="+strconv.Itoa(n),
		"--output-fields=MESSAGE,PRIORITY,SYSLOG_IDENTIFIER")
	cmd := exec.CommandContext(ctx, cmpOr(j.Path, "journalctl"), args...)
	cmd.WaitDelay = 500 * time.Millisecond
	var stderr limitedBuffer
	stderr.max = 4 << 10
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("journalctl: %v", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("journalctl: %v", err)
	}
	entries, perr := parseJournal(stdout, n)
	if perr != nil {
		cancel() // stop it: nothing more is read
	}
	werr := cmd.Wait()
	if perr != nil {
		return entries, fmt.Errorf("journalctl: %v", perr)
	}
	if werr != nil {
		return nil, fmt.Errorf("journalctl: %v %s", werr, bytes.TrimSpace(stderr.Bytes()))
	}
	return entries, nil
}

// parseJournal parses a journal export as it is read, through journalOutputLimit
// and journalLineLimit, and keeps its last n entries (n <= 0: all).
func parseJournal(r io.Reader, n int) ([]JournalEntry, error) {
	var entries []JournalEntry
	keep := func() []JournalEntry {
		if n > 0 && len(entries) > n {
			return append([]JournalEntry(nil), entries[len(entries)-n:]...)
		}
		return entries
	}
	lim := &io.LimitedReader{R: r, N: journalOutputLimit + 1}
	tooMuch := fmt.Errorf("more than %d MiB of output; the rest is not read", journalOutputLimit>>20)
	sc := bufio.NewScanner(lim)
	sc.Buffer(make([]byte, 0, 64<<10), journalLineLimit)
	line := 1
	for ; sc.Scan(); line++ {
		if lim.N <= 0 {
			return keep(), tooMuch
		}
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
			return keep(), fmt.Errorf("journal export line %d: %v", line, err)
		}
		e := JournalEntry{Priority: -1, Message: field(raw["MESSAGE"]), Identifier: field(raw["SYSLOG_IDENTIFIER"])}
		if p, err := strconv.Atoi(field(raw["PRIORITY"])); err == nil {
			e.Priority = p
		}
		if us, err := strconv.ParseInt(field(raw["__REALTIME_TIMESTAMP"]), 10, 64); err == nil {
			e.Time = time.UnixMicro(us)
		}
		entries = append(entries, e)
		if n > 0 && len(entries) >= 2*n {
			entries = keep()
		}
	}
	switch err := sc.Err(); {
	case errors.Is(err, bufio.ErrTooLong):
		return keep(), fmt.Errorf("journal export line %d longer than %d MiB", line, journalLineLimit>>20)
	case err != nil:
		return keep(), err
	case lim.N <= 0:
		return keep(), tooMuch
	}
	return keep(), nil
}

// field is a journal export field as text: a string, or an array of bytes.
func field(m json.RawMessage) string {
	if len(m) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(m, &s) == nil {
		return s
	}
	var b []byte
	var ints []int
	if json.Unmarshal(m, &ints) == nil {
		for _, i := range ints {
			b = append(b, byte(i))
		}
		return string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
	}
	return ""
}
