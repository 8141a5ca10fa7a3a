// Package doctor answers "why is my node NotReady?" on the node itself. It runs a
// checklist over what eksboot configured, in the order a node comes up: the instance
// metadata service and its credentials, what the last eksboot run wrote (and whether
// the files still equal it), the API server (DNS, TCP, TLS with the node's CA, the
// clock), the node's identity (the kubeconfig's exec credential plugin, the API
// server's answer to its token, the kubelet's Unauthorized and forbidden lines) and
// the runtime (containerd and the kubelet over D-Bus, the CRI socket, the CNI
// configuration, disk and inode pressure, max pods against the ENIs).
//
// Each check gives a Result: ok, warn or FAIL, its evidence and a fix in one sentence,
// or skip when the checklist's deadline left it no time.
// Every side effect sits behind the small interfaces of Env, so tests inject fakes
// (an IMDS, an API server, a dialer that hangs, a journal export, a statfs); Run
// itself only orders the checks and feeds one's facts to the next.
//
// Secrets never reach a Result: the session token, the credentials, the kubelet's
// token and the CA's body are kept out of every evidence line, and Run removes any
// that slipped into one (redact) before it returns. Nothing from outside reaches the
// terminal raw either: every answer is read through a limit, and Run escapes the
// control characters of every line (oneLine), so that an ESC sequence or a newline in
// a journal line, an API answer or the status file cannot forge doctor's output.
package doctor

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/eksboot/eksboot/internal/quote"
	"github.com/eksboot/eksboot/internal/scrub"
)

// Status is a check's verdict.
type Status string

// The verdicts. FAIL is upper case so that it stands out in a column of ok. Skip is
// a check the checklist's deadline (--timeout) left no time for, or cut short: not
// run, so neither a failure nor a fix.
const (
	OK   Status = "ok"
	Warn Status = "warn"
	Fail Status = "FAIL"
	Skip Status = "skip"
)

// Result is the outcome of one check.
type Result struct {
	// Group is the part of the node the check is about: IMDS, eksboot, API server,
	// identity, runtime.
	Group string `json:"group"`
	// Check names the check, e.g. "imds.token".
	Check  string `json:"check"`
	Status Status `json:"status"`
	// Evidence is what the check saw, in one line.
	Evidence string `json:"evidence"`
	// Fix is what to do, in one sentence; empty when the check is ok.
	Fix string `json:"fix,omitempty"`
	// Detail is more evidence over several lines: a diff, journal lines.
	Detail string `json:"detail,omitempty"`
}

// Report is the whole checklist.
type Report struct {
	// Node names the instance ("i-0123456789abcdef0 (m5.large, us-west-2)") when IMDS
	// said.
	Node    string    `json:"node,omitempty"`
	Started time.Time `json:"started"`
	// Took is how long the checklist took, in milliseconds.
	TookMS  int64    `json:"tookMS"`
	Results []Result `json:"checks"`
	Summary Summary  `json:"summary"`
}

// Summary counts the results by status; Skip counts the checks not run.
type Summary struct {
	OK   int `json:"ok"`
	Warn int `json:"warn"`
	Fail int `json:"fail"`
	Skip int `json:"skip"`
}

// Failed reports whether any check failed.
func (r *Report) Failed() bool { return r.Summary.Fail > 0 }

// Run runs every check under ctx (the whole run's deadline, --timeout) and returns
// the report. Each network check also has a deadline of its own, o.CheckTimeout,
// so one hanging peer leaves time for the others.
func Run(ctx context.Context, env *Env, o Options) *Report {
	o = o.withDefaults()
	start := env.now()
	r := &Report{Started: start.UTC()}
	d := &run{ctx: ctx, env: env, o: o, report: r}

	d.checkIMDS()
	d.checkStatus()
	d.checkAPIServer()
	d.checkIdentity()
	d.checkRuntime()

	r.Node = oneLine(d.redact(d.facts.node()))
	r.Results = d.redactAll(r.Results)
	for _, res := range r.Results {
		switch res.Status {
		case OK:
			r.Summary.OK++
		case Warn:
			r.Summary.Warn++
		case Skip:
			r.Summary.Skip++
		default:
			r.Summary.Fail++
		}
	}
	r.TookMS = env.now().Sub(start).Milliseconds()
	return r
}

// Options tune a run.
type Options struct {
	// CheckTimeout bounds each network check (a dial, a TLS handshake, an IMDS
	// request, the exec plugin). Default 5 s.
	CheckTimeout time.Duration
	// CNIGrace is how long after the kubelet started a missing CNI configuration is
	// only a warning (the VPC CNI's aws-node pod writes it once the node has joined).
	// Default 10 minutes.
	CNIGrace time.Duration
}

func (o Options) withDefaults() Options {
	if o.CheckTimeout <= 0 {
		o.CheckTimeout = 5 * time.Second
	}
	if o.CNIGrace <= 0 {
		o.CNIGrace = 10 * time.Minute
	}
	return o
}

// run is one checklist in progress: the facts each check leaves for the next.
type run struct {
	ctx    context.Context
	env    *Env
	o      Options
	report *Report
	facts  facts
	// secrets are values no result may show (tokens, credentials), met by this run.
	secrets scrub.Secrets
	// digestKey keys the digests of redacted values (redactFile), drawn once a run.
	digestKey []byte
}

// facts are what the checks learnt, for the checks after them.
type facts struct {
	instanceID, instanceType, region, accountID, partition string
	role                                                   string // the instance profile's role name
	kubeconfig                                             *kubeconfig
	serverHost, serverPort                                 string
	tlsOK                                                  bool
	caPool                                                 *x509.CertPool
	serverAddr                                             string // the address api.tcp connected to
	apiToken                                               string
	kubeletSince                                           time.Time // the kubelet's last start (zero: unknown)
	kubeletJournal                                         []JournalEntry
	kubeletJournalErr                                      error
}

func (f *facts) node() string {
	if f.instanceID == "" {
		return ""
	}
	return fmt.Sprintf("%s (%s, %s)", f.instanceID, f.instanceType, f.region)
}

// roleARN is the node role's ARN as aws-auth and access entries want it (no path:
// IMDS gives only the name, and aws-auth matches the ARN without its path).
func (f *facts) roleARN() string {
	if f.role == "" {
		return ""
	}
	account, partition := f.accountID, f.partition
	if account == "" {
		account = "ACCOUNT"
	}
	if partition == "" {
		partition = "aws"
	}
	return fmt.Sprintf("arn:%s:iam::%s:role/%s", partition, account, f.role)
}

// add records a result.
func (d *run) add(group, check string, s Status, evidence, fix string) *Result {
	d.report.Results = append(d.report.Results, Result{Group: group, Check: check, Status: s, Evidence: evidence, Fix: fix})
	return &d.report.Results[len(d.report.Results)-1]
}

// notRunEvidence is the evidence of a check the deadline left no time for, and
// cutEvidence of one it cut short.
const (
	notRunEvidence = "not run: the checklist's --timeout ran out before it"
	cutEvidence    = "not run: the checklist's --timeout ran out while it ran"
)

// late reports whether the checklist's deadline has passed, and then records the
// checks named as not run: each check that needs the network (or D-Bus, or a
// program) asks before it starts, for itself and the checks that follow from it.
func (d *run) late(group string, checks ...string) bool {
	if d.ctx.Err() == nil {
		return false
	}
	for _, c := range checks {
		d.add(group, c, Skip, notRunEvidence, "")
	}
	return true
}

// addOrCut records a failed (or warned) check whose error may come from the
// checklist's deadline: when that deadline has passed, the check was cut short and
// is recorded as not run, since what it saw ("no answer within 5s") is not true.
func (d *run) addOrCut(group, check string, s Status, evidence, fix string) *Result {
	if d.ctx.Err() != nil {
		return d.add(group, check, Skip, cutEvidence, "")
	}
	return d.add(group, check, s, evidence, fix)
}

// quote quotes a value from outside for an evidence line: redacted first, then
// shortened (quote.Value), so that no prefix of a secret survives the cut.
func (d *run) quote(s string) string { return quote.Value(d.redact(s)) }

// secret marks v as a value no result may show.
func (d *run) secret(v string) { d.secrets.Add(v) }

// checkCtx is the context of one network check.
func (d *run) checkCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(d.ctx, d.o.CheckTimeout)
}

// redact removes the secrets met so far, the process's own (scrub.Process), and
// anything shaped like a token (an EKS bearer token, a credential header, a long
// base64 or hex run: scrub.Tokens) from s. Checks redact what they quote from
// outside (a plugin's stderr, journal lines, an answer) before they shorten it, so
// that no prefix of a secret survives.
func (d *run) redact(s string) string { return d.secrets.Remove(scrub.Text(s)) }

// redactAll is redact over every result's text, the last guard before Run returns,
// and then oneLine: the evidence and the fix are one line each, and each line of the
// detail is escaped on its own.
func (d *run) redactAll(results []Result) []Result {
	for i := range results {
		results[i].Evidence = oneLine(d.redact(results[i].Evidence))
		results[i].Fix = oneLine(d.redact(results[i].Fix))
		if det := strings.TrimRight(d.redact(results[i].Detail), "\n"); det != "" {
			lines := strings.Split(det, "\n")
			for j, l := range lines {
				lines[j] = oneLine(l)
			}
			results[i].Detail = strings.Join(lines, "\n") + "\n"
		} else {
			results[i].Detail = ""
		}
	}
	return results
}

// WriteText prints the report as a checklist grouped as the checks ran.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	b.WriteString("eksboot doctor")
	if r.Node != "" {
		b.WriteString(": " + r.Node)
	}
	b.WriteString("\n")
	group := ""
	for _, res := range r.Results {
		if res.Group != group {
			group = res.Group
			fmt.Fprintf(&b, "\n%s\n", group)
		}
		fmt.Fprintf(&b, "  %-4s  %-24s %s\n", res.Status, res.Check, res.Evidence)
		if res.Fix != "" {
			fmt.Fprintf(&b, "        %-24s fix: %s\n", "", res.Fix)
		}
		if res.Detail != "" {
			for _, l := range strings.Split(strings.TrimRight(res.Detail, "\n"), "\n") {
				fmt.Fprintf(&b, "        | %s\n", l)
			}
		}
	}
	notRun := ""
	if r.Summary.Skip > 0 {
		notRun = fmt.Sprintf(", %d not run", r.Summary.Skip)
	}
	fmt.Fprintf(&b, "\n%d checks: %d ok, %d warn, %d FAIL%s (%d ms)\n", len(r.Results), r.Summary.OK, r.Summary.Warn, r.Summary.Fail, notRun, r.TookMS)
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON prints the report as one JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
