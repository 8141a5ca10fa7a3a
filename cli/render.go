package cli

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/eksboot/eksboot/bootstrap"
)

// RenderFlags are render's options. The node's binary keeps render's command line
// (its help, completion and man page come from FlagSet); eksboot-render
// (cli/rendercmd) parses it.
type RenderFlags struct {
	UserData, InstanceType, Region, KubeletVersion, Profile string
	Help, Discover                                          bool
	// ImageFiles are --image-file's PATH=LOCAL, in order.
	ImageFiles []string
}

// FlagSet binds render's flags to o.
func (o *RenderFlags) FlagSet(prog string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(prog, pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.UserData, "user-data", "", "file with the user data, as the instance receives it (after EC2's base64)")
	fs.StringVar(&o.InstanceType, "instance-type", "", "instance type, such as m5.large")
	fs.StringVar(&o.Region, "region", "us-west-2", "region")
	fs.StringVar(&o.KubeletVersion, "kubelet-version", "1.32.9", "kubelet version of the node image")
	fs.StringVar(&o.Profile, "image-profile", bootstrap.ProfileAL2, "the node image's kind: al2 or al2023")
	fs.Var((*stringList)(&o.ImageFiles), "image-file", "PATH=LOCAL: the simulated image also has the node file PATH, with the content of the local file LOCAL (your image's kubelet-config.json, a drop-in of /etc/kubernetes/kubelet/config.json.d or /etc/eks/nodeadm.d); repeatable")
	fs.BoolVar(&o.Discover, "discover", false, "look up with eks:DescribeCluster, with your own AWS credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, else aws configure export-credentials), what the node would discover (the CA, the endpoint, the service CIDR) when the user data leaves it out")
	fs.BoolVarP(&o.Help, "help", "h", false, "print this help")
	return fs
}

// stringList is a repeatable option: each use adds a value.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, " ") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }
func (l *stringList) Type() string       { return "string" }

// renderAbout is render's paragraph of help.
const renderAbout = "Prints the files and kubelet flags a node launched with this user data would get: its scripts and cloud-config are evaluated on a simulated instance, running nothing on this host (offline unless --discover)."

// WriteRenderHelp writes render's help, what `eksboot render --help` prints, under
// the name prog (eksboot-render's --help).
func WriteRenderHelp(w io.Writer, prog string) {
	c, _ := lookupCommand("render")
	_ = c.writeHelp(w, prog) // render has a FlagSet: no error
}

// RenderProgram is the program that runs `eksboot render`: render's implementation
// (cmd/eksboot-render, cli/rendercmd), which links the user data's simulator
// (render/sim, with github.com/itchyny/gojq and mvdan.cc/sh/v3). Go initialises
// every package a binary links at every start, so in the node's binary they cost
// every boot their initialisation (1.2-1.7 ms here, and 2,460 of the 3,245
// allocations before main) for a command no boot runs, and 2.4 MiB of its 12.19; a
// program of its own, installed beside eksboot, costs the boot nothing.
const RenderProgram = "eksboot-render"

// renderRunner runs `eksboot render`: execRender, unless the program linked render's
// implementation in and said so with RenderInProcess.
var renderRunner = execRender

// RenderInProcess makes `eksboot render` run run, render's implementation linked into
// this program (cli/rendercmd.Run), instead of exec'ing RenderProgram. cmd/eksboot
// calls it unless built with the node tag: `go build ./cmd/eksboot` gives one program
// with every command, make build's bin/eksboot (-tags node, the node image's) leaves
// render to RenderProgram.
func RenderInProcess(run func(prog string, args []string, stdout, stderr io.Writer) int) {
	renderRunner = run
}

// execRender runs `eksboot render`: it execs RenderProgram with the same arguments
// and environment and prog as its argv[0], so every message and exit status is
// render's own, as when it was a command of this binary. The program writes to this
// process's standard output and error, not to stdout and stderr. execRender returns
// only when there is no RenderProgram to run (one line, exit 1, nothing written).
func execRender(prog string, args []string, stdout, stderr io.Writer) int {
	path, err := findRenderProgram()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return ExitFailure
	}
	err = syscall.Exec(path, append([]string{prog}, args...), os.Environ())
	fmt.Fprintf(stderr, "%s: error: run %s: %v\n", prog, path, err)
	return ExitFailure
}

// findRenderProgram returns the path of RenderProgram: beside this program's file
// (its symlinks resolved: a link to eksboot elsewhere finds the file's sibling), as
// make build and packer/install.sh put it, else on PATH.
func findRenderProgram() (string, error) {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	beside := "this program (" + fmt.Sprint(err) + ")"
	if err == nil {
		beside = exe
		if p, err := exec.LookPath(filepath.Join(filepath.Dir(exe), RenderProgram)); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath(RenderProgram); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%s is not beside %s nor on PATH; render is a separate program so that a node's boot does not load its simulator (make build builds both; go build ./cmd/eksboot without -tags node links it in)", RenderProgram, beside)
}
