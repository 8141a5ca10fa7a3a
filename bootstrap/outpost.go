package bootstrap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/eksboot/eksboot/nodesys"
)

// Local clusters on AWS Outposts (LocalOutpost). Both peers do the same three things,
// so that a node keeps working while its Outpost is cut off from the region:
//
//   - the API server's addresses, resolved at boot, are appended to /etc/hosts, so
//     the name resolves without the region's DNS;
//   - the kubelet joins by TLS bootstrap: its token (aws-iam-authenticator or aws
//     eks get-token) is in a bootstrap kubeconfig and names the cluster by its ID,
//     and the kubelet gets an X.509 client certificate, which needs no IAM call;
//   - the kubelet's --kubeconfig is the client-certificate kubeconfig.
//
// eksboot differs in two ways (docs/compat.md): /etc/hosts is rewritten, not
// appended to, keeping the lines of earlier runs out (a reboot does not add them
// again), and eksboot writes the kubelet's client-certificate kubeconfig itself, as
// the kubelet writes it after its bootstrap, so that the kubelet's --kubeconfig
// always exists (see outpostKubeconfig).

// Node paths of a local cluster.
const (
	// PathKubeletClientCert is the kubelet's client certificate and key, written by
	// the kubelet at its TLS bootstrap and renewed by it (a symbolic link to the
	// current pair).
	PathKubeletClientCert = "/var/lib/kubelet/pki/kubelet-client-current.pem"
)

// hostsMarker ends each line eksboot adds to /etc/hosts (a comment to the resolver),
// so that the next run finds and replaces its own lines.
const hostsMarker = "# eksboot: local cluster API server"

// ErrNotResolvedHere is what Env.LookupHost returns where names are not resolved
// (eksboot render): the API server's addresses are then left to the boot.
var ErrNotResolvedHere = errors.New("names are resolved on the node at boot")

// Bounds of the API server's name resolution on a local cluster: a few tries a few
// seconds apart, each under its own deadline. bootstrap.sh (getent) and nodeadm
// (net.LookupHost) try once, with the resolver's own retries, and fail the boot when
// the name does not resolve; so does eksboot, after these.
const (
	defaultHostLookupAttempts = 3
	defaultHostLookupInterval = 2 * time.Second
	hostLookupTimeout         = 10 * time.Second
	// maxHostAddrs bounds the lines /etc/hosts gets (an EKS endpoint has a few).
	maxHostAddrs = 16
)

// APIServerHosts is what the facts step learns for /etc/hosts on a local cluster.
type APIServerHosts struct {
	// Host is the API server's host name ("" when the endpoint is an IP address,
	// which needs no entry).
	Host string
	// Addrs are its addresses as resolved, in the resolver's order.
	Addrs []string
	// AtBoot: the name is resolved on the node at boot (eksboot render).
	AtBoot bool
	// Hosts is the node's /etc/hosts (nil when it has none).
	Hosts []byte
}

// resolveAPIServer resolves the API server's host name of a local cluster for
// /etc/hosts, with bounded retries, and reads the node's /etc/hosts.
func resolveAPIServer(ctx context.Context, endpoint string, env *Env) (*APIServerHosts, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("local cluster: API server endpoint: %w", err)
	}
	h := &APIServerHosts{Host: u.Hostname()}
	if h.Hosts, err = optional(env.Files.ReadFile(nodesys.HostsPath)); err != nil {
		return nil, err
	}
	if _, err := netip.ParseAddr(h.Host); err == nil {
		h.Host = "" // an address: nothing to resolve
		return h, nil
	}
	attempts := env.HostLookupAttempts
	if attempts <= 0 {
		attempts = defaultHostLookupAttempts
	}
	for i := 0; ; i++ {
		lctx, cancel := context.WithTimeout(ctx, hostLookupTimeout)
		addrs, err := env.LookupHost(lctx, h.Host)
		cancel()
		switch {
		case errors.Is(err, ErrNotResolvedHere):
			h.AtBoot = true
			return h, nil
		case err == nil && len(addrs) > 0:
			addrs = addrs[:min(len(addrs), maxHostAddrs)]
			for _, a := range addrs {
				if _, err := netip.ParseAddr(a); err != nil {
					return nil, fmt.Errorf("local cluster: the resolver gave %q for %s: not an IP address", a, h.Host)
				}
			}
			h.Addrs = addrs
			return h, nil
		case err == nil:
			err = errors.New("no addresses")
		}
		if i+1 >= attempts {
			return nil, fmt.Errorf("local cluster: the API server's name %s does not resolve after %d tries (%v); /etc/hosts needs its addresses so the node keeps working while the Outpost is cut off from the region", h.Host, attempts, err)
		}
		env.Log.Warn("the API server's name does not resolve yet; retrying", zap.String("host", h.Host), zap.Int("try", i+1), zap.Error(err))
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(env.HostLookupInterval):
		}
	}
}

// HostsFile returns /etc/hosts with the API server's addresses: the node's file
// without the lines an earlier run added (those ending in hostsMarker), then one
// "address<TAB>host  # marker" line per address that the file does not map to host
// already. The second result is false when there is nothing to write (no host name
// to map, or resolution is left to the boot). It is pure.
func (h *APIServerHosts) HostsFile() ([]byte, bool) {
	if h == nil || h.Host == "" || h.AtBoot {
		return nil, false
	}
	var out bytes.Buffer
	have := map[string]bool{}
	for line := range strings.Lines(string(h.Hosts)) {
		if strings.HasSuffix(strings.TrimRight(line, "\r\n \t"), hostsMarker) {
			continue
		}
		out.WriteString(line)
		if !strings.HasSuffix(line, "\n") {
			out.WriteByte('\n')
		}
		fields := strings.Fields(line)
		if i := slices.IndexFunc(fields, func(f string) bool { return strings.HasPrefix(f, "#") }); i >= 0 {
			fields = fields[:i]
		}
		if len(fields) >= 2 && slices.ContainsFunc(fields[1:], func(n string) bool { return strings.EqualFold(n, h.Host) }) {
			if a, err := netip.ParseAddr(fields[0]); err == nil {
				have[a.String()] = true
			}
		}
	}
	for _, s := range h.Addrs {
		a, _ := netip.ParseAddr(s) // checked by resolveAPIServer
		if have[a.String()] {
			continue
		}
		have[a.String()] = true
		fmt.Fprintf(&out, "%s\t%s\t%s\n", a, h.Host, hostsMarker)
	}
	return out.Bytes(), true
}
