// Package imds reads the facts eksboot needs about the instance it runs on
// from the EC2 instance metadata service (IMDS), the way bootstrap.sh did with
// curl: region and account from the identity document, instance type, ID,
// availability zone, MAC, addresses and the VPC's CIDR blocks.
//
// It speaks IMDSv2 only (one session token per Fetch, no IMDSv1 fallback),
// asks independent paths in parallel, tells a 404 of an optional path (an
// empty value) from any other failure, checks every answer before it is used,
// and bounds the whole Fetch by a deadline so a hung service cannot stall
// the node's boot.
package imds

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	sdkimds "github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
)

// DefaultTimeout bounds a Fetch whose Options.Timeout is zero.
const DefaultTimeout = 60 * time.Second

// maxBody caps how much of one answer is read; real answers are far smaller.
const maxBody = 1 << 20

// Paths read by Fetch, as named in errors (no leading "/").
const (
	PathIdentityDocument = "latest/dynamic/instance-identity/document"    // gives Region and AccountID.
	PathDomain           = "latest/meta-data/services/domain"             // gives Domain.
	PathInstanceType     = "latest/meta-data/instance-type"               // gives InstanceType.
	PathInstanceID       = "latest/meta-data/instance-id"                 // gives InstanceID.
	PathAvailabilityZone = "latest/meta-data/placement/availability-zone" // gives AvailabilityZone.
	PathMAC              = "latest/meta-data/mac"                         // gives MAC.
	PathLocalIPv4        = "latest/meta-data/local-ipv4"                  // gives LocalIPv4.
	PathLocalHostname    = "latest/meta-data/local-hostname"              // gives LocalHostname.
)

// macsPath is the folder of the per-interface paths.
const macsPath = "latest/meta-data/network/interfaces/macs/"

// PathIPv6s returns the path of the IPv6 addresses of the interface with mac.
func PathIPv6s(mac string) string { return macsPath + mac + "/ipv6s" }

// PathVPCIPv4CIDRs returns the path of the VPC IPv4 CIDR blocks of the interface with mac.
func PathVPCIPv4CIDRs(mac string) string { return macsPath + mac + "/vpc-ipv4-cidr-blocks" }

// Facts are the instance facts eksboot reads from IMDS.
type Facts struct {
	Region           string   // .region of latest/dynamic/instance-identity/document (required)
	AccountID        string   // .accountId of the identity document ("" if absent)
	Domain           string   // latest/meta-data/services/domain ("" when it answers 404)
	InstanceType     string   // latest/meta-data/instance-type (required)
	InstanceID       string   // latest/meta-data/instance-id (required)
	AvailabilityZone string   // latest/meta-data/placement/availability-zone (required)
	MAC              string   // latest/meta-data/mac (required)
	LocalIPv4        string   // latest/meta-data/local-ipv4 ("" when 404)
	LocalHostname    string   // latest/meta-data/local-hostname ("" when 404)
	IPv6s            []string // latest/meta-data/network/interfaces/macs/<mac>/ipv6s, one per line (nil when 404)
	VPCIPv4CIDRs     []string // .../macs/<mac>/vpc-ipv4-cidr-blocks, one per line (nil when 404)
}

// Options configure Fetch.
type Options struct {
	// Endpoint is the base URL of the service, such as "http://127.0.0.1:1338";
	// "" lets the SDK resolve it (it honours AWS_EC2_METADATA_SERVICE_ENDPOINT,
	// else uses the link-local address). See ResolveEndpoint.
	Endpoint string
	// Timeout is the deadline for the whole Fetch; zero or less means DefaultTimeout.
	Timeout time.Duration
}

// PathError is the error Fetch returns for a path that could not be read or
// whose answer is not valid.
type PathError struct {
	Path string // e.g. "latest/meta-data/instance-type"
	Err  error
}

// Error returns "imds: PATH: reason".
func (e *PathError) Error() string { return "imds: " + e.Path + ": " + e.Err.Error() }

// Unwrap returns the reason.
func (e *PathError) Unwrap() error { return e.Err }

// query is one path to read: parse checks the body and stores the value; a
// 404 of an optional path leaves the value empty.
type query struct {
	path     string
	optional bool
	parse    func(body string) error
}

// Fetch reads the instance's Facts from IMDS: the identity document first
// (which gets the session token), then the other paths in parallel, then the
// paths under the interface's MAC in parallel. Every failure names the path
// it concerns; several failures of one step are joined in a fixed order.
func Fetch(ctx context.Context, opts Options) (*Facts, error) {
	if opts.Endpoint != "" {
		if _, err := checkEndpoint(opts.Endpoint); err != nil {
			return nil, fmt.Errorf("imds: endpoint %q: %w", opts.Endpoint, err)
		}
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c := newClient(opts.Endpoint)

	f := &Facts{}
	// The identity document goes first, alone: it gets the session token the
	// later requests share, so a service that gives no token fails once here
	// rather than once per path.
	document := []query{{path: PathIdentityDocument, parse: func(b string) error {
		var err error
		f.Region, f.AccountID, err = parseIdentityDocument(b)
		return err
	}}}
	noMAC := []query{
		{path: PathDomain, optional: true, parse: into(&f.Domain, parseName)},
		{path: PathInstanceType, parse: into(&f.InstanceType, parseInstanceType)},
		{path: PathInstanceID, parse: into(&f.InstanceID, parseName)},
		{path: PathAvailabilityZone, parse: into(&f.AvailabilityZone, parseName)},
		{path: PathMAC, parse: into(&f.MAC, parseMAC)},
		{path: PathLocalIPv4, optional: true, parse: into(&f.LocalIPv4, parseIPv4)},
		{path: PathLocalHostname, optional: true, parse: into(&f.LocalHostname, parseHostname)},
	}
	for _, qs := range [][]query{document, noMAC} {
		if err := c.readAll(ctx, qs); err != nil {
			return nil, err
		}
	}
	// These need the MAC read above.
	byMAC := []query{
		{path: PathIPv6s(f.MAC), optional: true, parse: intoList(&f.IPv6s, parseIPv6)},
		{path: PathVPCIPv4CIDRs(f.MAC), optional: true, parse: intoList(&f.VPCIPv4CIDRs, parseIPv4CIDR)},
	}
	if err := c.readAll(ctx, byMAC); err != nil {
		return nil, err
	}
	return f, nil
}

// client reads paths through one SDK client, which keeps one session token.
type client struct {
	sdk *sdkimds.Client
}

func newClient(endpoint string) *client {
	// IMDS is link-local: never send it through an HTTP proxy from the environment.
	hc := awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		tr.Proxy = nil
	})
	return &client{sdk: sdkimds.New(sdkimds.Options{
		Endpoint:          endpoint,
		ClientEnableState: sdkimds.ClientEnabled,
		EnableFallback:    aws.FalseTernary, // IMDSv2 only
		HTTPClient:        hc,
	})}
}

// readAll runs the queries in parallel and joins their errors in query order.
func (c *client) readAll(ctx context.Context, qs []query) error {
	errs := make([]error, len(qs))
	var wg sync.WaitGroup
	for i, q := range qs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.read(ctx, q)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// read fetches and parses one query, returning a *PathError on failure.
func (c *client) read(ctx context.Context, q query) error {
	body, found, err := c.get(ctx, q.path)
	switch {
	case err != nil:
		return &PathError{Path: q.path, Err: err}
	case !found && q.optional:
		return nil
	case !found:
		return &PathError{Path: q.path, Err: errors.New("not found (404), but it is required")}
	}
	if err := q.parse(body); err != nil {
		return &PathError{Path: q.path, Err: err}
	}
	return nil
}

// get returns the body of path; found is false when the service answered 404.
func (c *client) get(ctx context.Context, path string) (body string, found bool, err error) {
	var content io.ReadCloser
	if rest, ok := strings.CutPrefix(path, "latest/dynamic/"); ok {
		var out *sdkimds.GetDynamicDataOutput
		if out, err = c.sdk.GetDynamicData(ctx, &sdkimds.GetDynamicDataInput{Path: rest}); err == nil {
			content = out.Content
		}
	} else {
		var out *sdkimds.GetMetadataOutput
		rest := strings.TrimPrefix(path, "latest/meta-data/")
		if out, err = c.sdk.GetMetadata(ctx, &sdkimds.GetMetadataInput{Path: rest}); err == nil {
			content = out.Content
		}
	}
	if isNotFound(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	defer content.Close()
	b, err := io.ReadAll(io.LimitReader(content, maxBody+1))
	if err != nil {
		return "", true, fmt.Errorf("read answer: %w", err)
	}
	if len(b) > maxBody {
		return "", true, fmt.Errorf("answer is larger than %d bytes", maxBody)
	}
	return string(b), true, nil
}

// isNotFound reports whether err is the service answering 404.
func isNotFound(err error) bool {
	var status interface{ HTTPStatusCode() int }
	return errors.As(err, &status) && status.HTTPStatusCode() == http.StatusNotFound
}
