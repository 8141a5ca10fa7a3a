package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/pflag"
)

// versionOptions are the flags of `eksboot version`.
type versionOptions struct {
	output string
	help   bool
}

func (o *versionOptions) flagSet(prog string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(prog, pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.output, "output", "text", "output format: text or json")
	fs.BoolVarP(&o.help, "help", "h", false, "print this help")
	return fs
}

// versionInfo is what `eksboot version` prints.
type versionInfo struct {
	// Version is the release tag (-ldflags -X .../cli.Version), else the module
	// version `go install` recorded, else "dev".
	Version string `json:"version"`
	// Commit is the VCS revision the binary was built from ("" when the build did
	// not record one: -buildvcs=false, or not built in a checkout).
	Commit string `json:"commit,omitempty"`
	// CommitTime is that revision's commit time (RFC 3339): a reproducible build
	// records no time of its own.
	CommitTime string `json:"commitTime,omitempty"`
	// Modified says the checkout had uncommitted changes.
	Modified  bool   `json:"modified,omitempty"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// buildVersion reads versionInfo from the build information (nil: none) and the
// -X tag. It is pure.
func buildVersion(bi *debug.BuildInfo, tag string) versionInfo {
	v := versionInfo{Version: tag, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi == nil {
		return v
	}
	if v.Version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v.Version = bi.Main.Version
	}
	v.GoVersion = bi.GoVersion
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.time":
			v.CommitTime = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// text is versionInfo as `eksboot version` prints it.
func (v versionInfo) text() string {
	s := "eksboot " + v.Version + "\n"
	if v.Commit != "" {
		mod := ""
		if v.Modified {
			mod = " (with uncommitted changes)"
		}
		s += fmt.Sprintf("commit:      %s%s\n", v.Commit, mod)
	}
	if v.CommitTime != "" {
		s += fmt.Sprintf("commit time: %s\n", v.CommitTime)
	}
	return s + fmt.Sprintf("go:          %s %s\n", v.GoVersion, v.Platform)
}

// runVersion is `eksboot version [--output text|json]`.
func runVersion(prog string, args []string, stdout, stderr io.Writer) int {
	var o versionOptions
	fs := o.flagSet(prog)
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "%s: %v (see --help)\n", prog, err)
		return ExitUsage
	}
	switch {
	case o.help:
		return writeHelpOf(stdout, stderr, "version", prog)
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "%s: unexpected arguments %q (see --help)\n", prog, fs.Args())
		return ExitUsage
	case o.output != "text" && o.output != "json":
		fmt.Fprintf(stderr, "%s: --output %q: want text or json\n", prog, o.output)
		return ExitUsage
	}
	bi, _ := debug.ReadBuildInfo()
	v := buildVersion(bi, Version)
	if o.output == "json" {
		b, _ := json.Marshal(v) // a struct of strings and a bool
		fmt.Fprintf(stdout, "%s\n", b)
		return ExitOK
	}
	_, _ = io.WriteString(stdout, v.text())
	return ExitOK
}

// writeHelpOf writes the help of the command called name.
func writeHelpOf(stdout, stderr io.Writer, name, prog string) int {
	c, _ := lookupCommand(name)
	if err := c.writeHelp(stdout, prog); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return ExitFailure
	}
	return ExitOK
}
