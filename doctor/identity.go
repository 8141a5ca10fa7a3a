package doctor

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os/exec"
	"path"
	"strings"
	"time"

	"github.com/eksboot/eksboot/internal/lazy"
	"github.com/eksboot/eksboot/internal/quote"
	"github.com/eksboot/eksboot/internal/strictjson"
)

const identityGroup = "identity"

// execInfo is what the kubelet hands its exec plugin in KUBERNETES_EXEC_INFO.
const execInfo = `{"kind":"ExecCredential","apiVersion":"%s","spec":{"interactive":false}}`

// pluginPath is where a plugin named without a slash is looked for, as the kubelet
// finds it on systemd's default PATH.
var pluginPath = []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}

// execCredential is the part of the plugin's answer the check reads.
type execCredential struct {
	Status struct {
		Token               string    `json:"token"`
		ExpirationTimestamp time.Time `json:"expirationTimestamp"`
	} `json:"status"`
}

// checkIdentity: on a local cluster the bootstrap kubeconfig and the client
// certificate (outpost.go); the exec plugin returns a token, the API server accepts it, and
// the kubelet's journal has no Unauthorized or forbidden lines.
func (d *run) checkIdentity() {
	d.checkLocalCluster()
	d.checkExecPlugin()
	d.checkTokenAccepted()
	d.checkKubeletAuthLines()
}

// checkExecPlugin runs the kubeconfig's exec credential plugin as the kubelet would.
func (d *run) checkExecPlugin() {
	kc := d.facts.kubeconfig
	if kc == nil {
		return // api.kubeconfig failed
	}
	var ex *execConfig
	for _, u := range kc.Users {
		if u.User.Exec != nil {
			ex = u.User.Exec
			break
		}
	}
	if ex == nil || ex.Command == "" {
		d.add(identityGroup, "identity.exec-plugin", Warn, KubeconfigPath+" has no exec credential plugin: the kubelet authenticates otherwise (a client certificate or a token)", "")
		return
	}
	bin, err := d.findPlugin(ex.Command)
	if err != nil {
		d.add(identityGroup, "identity.exec-plugin", Fail, fmt.Sprintf("the kubeconfig's credential plugin %s: %v", d.quote(ex.Command), err),
			"Install it (the AL2 image has /usr/bin/aws-iam-authenticator, AL2023 the AWS CLI v2), or use the image eksboot was built for.")
		return
	}
	env := []string{"KUBERNETES_EXEC_INFO=" + fmt.Sprintf(execInfo, cmpOr(ex.APIVersion, "client.authentication.k8s.io/v1beta1"))}
	for _, e := range ex.Env {
		env = append(env, e.Name+"="+e.Value)
	}
	if d.late(identityGroup, "identity.exec-plugin", "identity.api") {
		return
	}
	ctx, cancel := context.WithTimeout(d.ctx, 2*d.o.CheckTimeout) // the AWS CLI starts slowly
	defer cancel()
	start := d.env.now()
	stdout, stderr, err := d.env.Exec.Run(ctx, bin, ex.Args, env)
	took := d.env.now().Sub(start).Round(time.Millisecond)
	name := path.Base(ex.Command)
	if err != nil {
		why := err.Error()
		if ctx.Err() != nil {
			why = fmt.Sprintf("no answer within %s", 2*d.o.CheckTimeout)
		}
		if line := d.redact(lastLine(stderr)); line != "" {
			why += fmt.Sprintf(": %q", clip(line, 200))
		}
		d.addOrCut(identityGroup, "identity.exec-plugin", Fail, fmt.Sprintf("%s %s failed: %s", name, d.redact(strings.Join(ex.Args, " ")), why),
			"The plugin signs with the instance profile's credentials: see imds.credentials, and run the command by hand to see its whole error.")
		return
	}
	var cred execCredential
	if err := strictjson.Unmarshal(stdout, &cred, answerLimits); err != nil || cred.Status.Token == "" {
		d.add(identityGroup, "identity.exec-plugin", Fail, fmt.Sprintf("%s printed no ExecCredential with a token (%d bytes on stdout)", name, len(stdout)),
			"Run the command by hand and check its version against the kubeconfig's apiVersion.")
		return
	}
	d.secret(cred.Status.Token)
	d.facts.apiToken = cred.Status.Token
	exp := ""
	if !cred.Status.ExpirationTimestamp.IsZero() {
		exp = ", expires " + cred.Status.ExpirationTimestamp.UTC().Format(time.RFC3339)
	}
	d.add(identityGroup, "identity.exec-plugin", OK, fmt.Sprintf("%s returned a token (%d bytes%s) in %s", name, len(cred.Status.Token), exp, took), "")
}

// findPlugin is the host path of the plugin under the root.
func (d *run) findPlugin(cmd string) (string, error) {
	candidates := []string{cmd}
	if !strings.Contains(cmd, "/") {
		candidates = candidates[:0]
		for _, dir := range pluginPath {
			candidates = append(candidates, path.Join(dir, cmd))
		}
	}
	for _, c := range candidates {
		st, err := d.env.Files.Stat(c)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		if st.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%s is not executable", c)
		}
		return d.env.Files.Resolve(c)
	}
	return "", fs.ErrNotExist
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// checkTokenAccepted asks the API server who the token is (SelfSubjectReview).
func (d *run) checkTokenAccepted() {
	if !d.facts.tlsOK || d.facts.apiToken == "" || d.late(identityGroup, "identity.api") {
		return
	}
	ctx, cancel := d.checkCtx()
	defer cancel()
	addr := d.facts.serverAddr
	tr := &http.Transport{
		Proxy:                  nil,
		DisableKeepAlives:      true,
		MaxResponseHeaderBytes: maxAnswerHeader,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.env.Dialer.DialContext(ctx, network, addr)
		},
		TLSClientConfig: &tls.Config{RootCAs: d.facts.caPool, ServerName: d.facts.serverHost, Time: d.env.now, MinVersion: tls.VersionTLS12},
	}
	defer tr.CloseIdleConnections()
	body := `{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+net.JoinHostPort(d.facts.serverHost, d.facts.serverPort)+"/apis/authentication.k8s.io/v1/selfsubjectreviews", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+d.facts.apiToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		d.addOrCut(identityGroup, "identity.api", Warn, fmt.Sprintf("the API server did not answer who the token is: %v", unwrapURL(err)), "See the API server checks.")
		return
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxReviewBody+1))
	if err == nil && len(b) > maxReviewBody {
		err = fmt.Errorf("an answer larger than %d KiB", maxReviewBody>>10)
	}
	if err != nil {
		d.addOrCut(identityGroup, "identity.api", Warn, fmt.Sprintf("the API server's answer to the token review (HTTP %d) is unreadable: %v", resp.StatusCode, err), "See the API server checks.")
		return
	}
	arn := cmpOr(d.facts.roleARN(), "the node role")
	switch resp.StatusCode {
	case http.StatusCreated, http.StatusOK:
		var rev struct {
			Status struct {
				UserInfo struct {
					Username string   `json:"username"`
					Groups   []string `json:"groups"`
				} `json:"userInfo"`
			} `json:"status"`
		}
		_ = strictjson.Unmarshal(b, &rev, answerLimits)
		u := rev.Status.UserInfo
		if name, ok := strings.CutPrefix(u.Username, "system:node:"); !ok || !nodeName.Get().MatchString(name) {
			d.add(identityGroup, "identity.api", Warn, fmt.Sprintf("the API server knows the token as %s (groups %s), not as a node (system:node:<name>)", d.quote(u.Username), d.groups(u.Groups)),
				"Map "+arn+" with the username system:node:{{EC2PrivateDNSName}} and the groups system:bootstrappers and system:nodes (aws-auth), or use an access entry of type EC2_LINUX.")
			return
		}
		d.add(identityGroup, "identity.api", OK, fmt.Sprintf("the API server knows the node as %s (groups %s)", u.Username, d.groups(u.Groups)), "")
	case http.StatusUnauthorized:
		d.add(identityGroup, "identity.api", Fail, fmt.Sprintf("the API server refuses the node's token (401 Unauthorized): %s is neither in the aws-auth ConfigMap nor in the cluster's access entries", arn),
			fmt.Sprintf("Add it: aws eks create-access-entry --cluster-name <cluster> --principal-arn %s --type EC2_LINUX (or a mapRoles entry in aws-auth with the groups system:bootstrappers and system:nodes).", arn))
	case http.StatusForbidden:
		d.add(identityGroup, "identity.api", OK, "the API server accepts the node's token (it may not review itself: 403)", "")
	default:
		d.add(identityGroup, "identity.api", Warn, fmt.Sprintf("the API server answers the token review with HTTP %d (older than Kubernetes 1.28?)", resp.StatusCode), "")
	}
}

// maxReviewBody bounds the token review's answer (a few hundred bytes).
const maxReviewBody = 64 << 10

// nodeName is a Node's name (a DNS subdomain, as the API server requires).
var nodeName = lazy.Regexp{Expr: `^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`}

// groups shows the token review's groups, at most quote.MaxProblems of them, each
// redacted and shortened to 100 bytes (Run escapes them).
func (d *run) groups(gs []string) string {
	q := make([]string, len(gs))
	for i, g := range gs {
		q[i] = clip(d.redact(g), 100)
	}
	return strings.ReplaceAll(quote.List(q), "; ", ", ")
}

// Kubelet journal lines that mean the API server refused it.
var (
	forbiddenUser = lazy.Regexp{Expr: `forbidden: User \\?"([^"\\]+)\\?"`}
	// unauthorizedLine is the API server's 401 as client-go reports it (err="Unauthorized",
	// "failed to list *v1.Node: Unauthorized"), a word of its own: the kubelet also logs
	// its configuration, whose cacheUnauthorizedTTL is not a refusal.
	unauthorizedLine = lazy.Regexp{Expr: `\bUnauthorized\b|the server has asked for the client to provide credentials`}
	forbiddenLine    = lazy.Regexp{Expr: `\bforbidden\b`}
)

// checkKubeletAuthLines reads the kubelet's journal since it last started.
func (d *run) checkKubeletAuthLines() {
	entries, err := d.kubeletJournal()
	if err != nil {
		d.addOrCut(identityGroup, "identity.kubelet-journal", Warn, "the kubelet's journal is unreadable: "+err.Error(), "Read it with journalctl -u kubelet.")
		return
	}
	var unauthorized, anonymous, forbidden []JournalEntry
	var users []string
	for _, e := range entries {
		m := e.Message
		switch {
		case unauthorizedLine.Get().MatchString(m):
			unauthorized = append(unauthorized, e)
		case strings.Contains(m, `User "system:anonymous"`) || strings.Contains(m, `User \"system:anonymous\"`):
			anonymous = append(anonymous, e)
		case forbiddenLine.Get().MatchString(m) && !strings.Contains(m, "no relationship found between node"):
			// The node authorizer's "no relationship found" lines are normal while pods are
			// being bound to the node.
			forbidden = append(forbidden, e)
			if u := forbiddenUser.Get().FindStringSubmatch(m); u != nil && !contains(users, u[1]) {
				users = append(users, u[1])
			}
		}
	}
	arn := cmpOr(d.facts.roleARN(), "the instance profile's role")
	since := "in its journal"
	if !d.facts.kubeletSince.IsZero() {
		since = "since it started at " + d.facts.kubeletSince.UTC().Format(time.RFC3339)
	}
	switch {
	case len(unauthorized) > 0:
		r := d.add(identityGroup, "identity.kubelet-journal", Fail,
			fmt.Sprintf("%d Unauthorized lines from the kubelet %s: the API server does not accept its IAM identity %s; a deleted or renamed node role in aws-auth makes every node of the role NotReady", len(unauthorized), since, arn),
			fmt.Sprintf("Map %s: an access entry (aws eks create-access-entry --principal-arn %s --type EC2_LINUX) or an aws-auth mapRoles entry with the groups system:bootstrappers and system:nodes.", arn, arn))
		r.Detail = d.journalDetail(unauthorized)
	case len(anonymous) > 0:
		r := d.add(identityGroup, "identity.kubelet-journal", Fail,
			fmt.Sprintf("%d lines of the kubelet %s are forbidden to system:anonymous: it reached the API server without credentials", len(anonymous), since),
			"The kubeconfig's exec plugin gave no token: see identity.exec-plugin.")
		r.Detail = d.journalDetail(anonymous)
	case len(forbidden) > 0:
		r := d.add(identityGroup, "identity.kubelet-journal", Warn,
			fmt.Sprintf("%d forbidden lines from the kubelet %s, as %s", len(forbidden), since, strings.Join(users, ", ")),
			fmt.Sprintf("The node is authenticated but not authorized: %s must map to system:node:{{EC2PrivateDNSName}} in the groups system:bootstrappers and system:nodes.", arn))
		r.Detail = d.journalDetail(forbidden)
	default:
		d.add(identityGroup, "identity.kubelet-journal", OK, fmt.Sprintf("no Unauthorized or forbidden lines from the kubelet %s (%d lines read)", since, len(entries)), "")
	}
}

// kubeletJournal is the kubelet's journal since its last start, read once.
func (d *run) kubeletJournal() ([]JournalEntry, error) {
	if d.facts.kubeletJournal == nil && d.facts.kubeletJournalErr == nil {
		// The kubelet's last start bounds the entries; when its state is unreadable
		// (reported by runtime.kubelet), every entry read counts.
		_, _ = d.kubeletUnit()
		ctx, cancel := d.checkCtx()
		defer cancel()
		all, err := d.env.Journal.Entries(ctx, "kubelet.service", journalLines)
		d.facts.kubeletJournalErr = err
		d.facts.kubeletJournal = []JournalEntry{}
		for _, e := range all {
			if e.Time.Before(d.facts.kubeletSince) {
				continue
			}
			d.facts.kubeletJournal = append(d.facts.kubeletJournal, e)
		}
	}
	return d.facts.kubeletJournal, d.facts.kubeletJournalErr
}

// journalLines is how many of a unit's latest entries are read.
const journalLines = 2000

// journalDetail shows the first and the last of the entries (at most 3 lines).
func (d *run) journalDetail(es []JournalEntry) string {
	pick := es
	if len(es) > 3 {
		pick = []JournalEntry{es[0], es[len(es)-2], es[len(es)-1]}
	}
	var b strings.Builder
	for i, e := range pick {
		if i == 1 && len(es) > 3 {
			fmt.Fprintf(&b, "… %d more\n", len(es)-3)
		}
		fmt.Fprintf(&b, "%s %s\n", e.Time.UTC().Format(time.RFC3339), clip(d.redact(e.Message), 300))
	}
	return b.String()
}

// clip escapes s to one line (oneLine) and shortens it to n bytes at a rune
// boundary. Callers redact s first, so that no prefix of a secret survives the cut.
func clip(s string, n int) string {
	s = oneLine(s)
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func isRuneStart(b byte) bool { return b&0xc0 != 0x80 }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ExecRunner runs programs with exec.CommandContext, the environment of the
// doctor plus extra, stdout and stderr read through a limit.
type ExecRunner struct {
	// Environ is the base environment (os.Environ).
	Environ func() []string
}

// Run implements Runner.
func (r ExecRunner) Run(ctx context.Context, p string, args, extra []string) ([]byte, []byte, error) {
	cmd := exec.CommandContext(ctx, p, args...)
	cmd.Env = append(r.Environ(), extra...)
	cmd.WaitDelay = 500 * time.Millisecond
	var stdout, stderr limitedBuffer
	stdout.max, stderr.max = 1<<20, 64<<10
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		err = fmt.Errorf("exit status %d", ee.ExitCode())
	}
	return stdout.Bytes(), stderr.Bytes(), err
}

// limitedBuffer keeps the first max bytes written to it and drops the rest.
type limitedBuffer struct {
	bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		if len(p) > room {
			b.Buffer.Write(p[:room])
		} else {
			b.Buffer.Write(p)
		}
	}
	return len(p), nil
}
