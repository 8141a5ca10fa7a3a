// Package imds reads the facts eksboot needs about the instance it runs on
// from the EC2 instance metadata service (IMDS). The identity document, which
// AWS signs and nodeadm reads too, gives the region, account, instance ID and
// type, availability zone and private IPv4 address; only what it lacks is
// read from other paths: the MAC and its VPC's IPv4 CIDR blocks, the domain,
// the local host name, and, when asked, the IPv6 addresses and the user data.
// A run on a usual instance makes five GETs after its token.
//
// It is built to survive what early boot throws at it. It speaks IMDSv2 as
// aws-sdk-go-v2's feature/ec2/imds client does, with a client of its own that
// the tests hold to the SDK's (client.go), with one session token per Fetch, fetched again when the service answers 401,
// and falls back to IMDSv1 only when Options.AllowIMDSv1 says so. It asks
// independent paths in parallel. Each attempt has its own timeout; connection
// errors, timeouts, 401, 408, 429, 5xx and a 404 of a path that must exist
// (it appears late) are retried with jittered exponential backoff until the
// deadline of the whole Fetch, after which the error names the path, the
// last status and the number of attempts. Every answer is checked before it
// is used: an HTML page or an empty body is a fault, not a value, and is
// asked again a few times before it fails the path. A 404 of an optional path
// is an answer: the value is empty.
//
// IMDS is an interface, not an oracle. Every answer is read through a limit on
// the wire (MaxUserData, MaxIdentityDocument, MaxAnswer); a larger one fails
// its path at once. No redirect is
// followed (it would carry the session token to another host): it fails the
// path. Each fact is checked as what it is (an instance type of at most 64
// bytes, a region name, a zone of that region, an instance ID, a domain of the
// region's partition, DNS host names), and an error quotes at most a short,
// escaped prefix of a bad value, never anything the token endpoint said. A
// local-hostname of several names gives the first, and Facts.Warnings says so.
package imds

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/eksboot/eksboot/internal/scrub"
)

// Defaults for the zero fields of Options.
const (
	// DefaultTimeout bounds a whole Fetch.
	DefaultTimeout = 60 * time.Second
	// DefaultAttemptTimeout bounds one attempt at a path (token included).
	// The real service answers in milliseconds; an attempt this slow has
	// met a dropped packet or a hung connection, and a new one is better.
	DefaultAttemptTimeout = 5 * time.Second
	// DefaultMinBackoff is the backoff before the first retry of a path.
	DefaultMinBackoff = 100 * time.Millisecond
	// DefaultMaxBackoff caps the backoff, which doubles with each retry.
	DefaultMaxBackoff = 2 * time.Second
)

// Paths read by Fetch, as named in errors (no leading "/").
//
// Required paths exist on every instance, so a 404 means the service has not
// populated them yet (IMDS answers 404 for a while early in boot): Fetch asks
// again until the deadline. Optional paths legitimately answer 404 for good
// (an IPv6-only instance has no local-ipv4, an instance without IPv6 no
// ipv6s), so their 404 is an empty value at once; waiting for them would
// delay every boot of such an instance by the whole deadline. Where an empty
// optional value matters, the caller fails naming the path (bootstrap: no
// local-ipv4 on an ipv4 cluster, no ipv6s on an ipv6 one) or has a fallback
// (the domain from the region, the node name from EC2).
//
// The identity document's fields come first: PathInstanceType, PathInstanceID,
// PathAvailabilityZone and PathLocalIPv4 are read only for a document that
// lacks the field (absent or null), never to check one it has.
const (
	PathIdentityDocument = "latest/dynamic/instance-identity/document"    // required; gives Region, AccountID, and the fields below it has.
	PathDomain           = "latest/meta-data/services/domain"             // optional; gives Domain.
	PathInstanceType     = "latest/meta-data/instance-type"               // required when the document has no instanceType; gives InstanceType.
	PathInstanceID       = "latest/meta-data/instance-id"                 // required when the document has no instanceId; gives InstanceID.
	PathAvailabilityZone = "latest/meta-data/placement/availability-zone" // required when the document has no availabilityZone; gives AvailabilityZone.
	PathMAC              = "latest/meta-data/mac"                         // required; gives MAC.
	PathLocalIPv4        = "latest/meta-data/local-ipv4"                  // when the document has no privateIp: optional unless Options.RequireLocalIPv4; gives LocalIPv4.
	PathLocalHostname    = "latest/meta-data/local-hostname"              // optional; gives LocalHostname.
	PathUserData         = "latest/user-data"                             // optional, only with Options.UserData; gives UserData.
	PathToken            = "latest/api/token"                             // the IMDSv2 session token (PUT).
)

// macsPath is the folder of the per-interface paths.
const macsPath = "latest/meta-data/network/interfaces/macs/"

// PathIPv6s returns the path of the IPv6 addresses of the interface with mac
// (optional: absent when the interface has none; read only with Options.IPv6).
func PathIPv6s(mac string) string { return macsPath + mac + "/ipv6s" }

// PathVPCIPv4CIDRs returns the path of the VPC IPv4 CIDR blocks of the
// interface with mac. It is required: every VPC has an IPv4 CIDR, and a
// missing one would silently pick the wrong cluster DNS address.
func PathVPCIPv4CIDRs(mac string) string { return macsPath + mac + "/vpc-ipv4-cidr-blocks" }

// Facts are the instance facts eksboot reads from IMDS. "The document" is
// latest/dynamic/instance-identity/document.
type Facts struct {
	Region           string   // the document's .region (required)
	AccountID        string   // the document's .accountId ("" if absent)
	Domain           string   // latest/meta-data/services/domain ("" when it answers 404)
	InstanceType     string   // the document's .instanceType, else latest/meta-data/instance-type (required)
	InstanceID       string   // the document's .instanceId, else latest/meta-data/instance-id (required)
	AvailabilityZone string   // the document's .availabilityZone, else latest/meta-data/placement/availability-zone (required)
	MAC              string   // latest/meta-data/mac (required)
	LocalIPv4        string   // the document's .privateIp, else latest/meta-data/local-ipv4 ("" when 404)
	LocalHostname    string   // latest/meta-data/local-hostname ("" when 404)
	IPv6s            []string // latest/meta-data/network/interfaces/macs/<mac>/ipv6s, one per line (nil when 404 or not asked for: Options.IPv6)
	VPCIPv4CIDRs     []string // .../macs/<mac>/vpc-ipv4-cidr-blocks, one per line (required)
	UserData         []byte   // latest/user-data as served (nil when not asked for or 404)
	// Warnings are what Fetch accepted but a caller should log: a local-hostname
	// of several names (LocalHostname is the first). Nil when none.
	Warnings []string
}

// Identity is what the identity document (latest/dynamic/instance-identity/document)
// says, the first thing Fetch reads. A field the document lacks (absent or null) is
// "", and Fetch reads it from its meta-data path instead; a field it has is checked
// like that path's answer, and a bad one fails the document.
type Identity struct {
	Region           string // .region (required)
	AccountID        string // .accountId
	InstanceID       string // .instanceId
	InstanceType     string // .instanceType
	AvailabilityZone string // .availabilityZone
	PrivateIP        string // .privateIp, the primary interface's private IPv4 address
}

// Options configure Fetch. Only Endpoint and Timeout matter in production;
// the others exist so tests can run the retries in milliseconds.
type Options struct {
	// Endpoint is the base URL of the service, such as "http://127.0.0.1:1338";
	// "" is DefaultEndpoint, the link-local address. ResolveEndpoint gives it
	// from the flag and the environment.
	Endpoint string
	// Timeout is the deadline for the whole Fetch; zero or less means DefaultTimeout.
	Timeout time.Duration
	// AllowIMDSv1 lets Fetch read without a session token when the service
	// refuses one (PUT latest/api/token answers 403, 404 or 405, or cannot be
	// reached). Off, such a refusal fails the Fetch: many accounts disable
	// IMDSv1, and a service that gives no token is usually misconfigured.
	AllowIMDSv1 bool
	// UserData also reads latest/user-data into Facts.UserData.
	UserData bool
	// IPv6 also reads the primary interface's IPv6 addresses into Facts.IPv6s
	// (optional: an instance without IPv6 has none). For callers that need
	// them: a node of an IPv6 cluster, or of a cluster whose IP family is not
	// known yet.
	IPv6 bool
	// OnIdentity, when set, is called once with the identity document's facts as
	// soon as the document is read, before the other paths are: a caller can start
	// what needs only these (eksboot's EC2 call for the node name) while the rest is
	// read. It must not block. It is not called when the document cannot be read.
	OnIdentity func(Identity)
	// RequireLocalIPv4 makes local-ipv4 a required path when it is read (the
	// identity document has no privateIp): its 404 is waited out as late
	// instead of meaning "no IPv4 address". For callers that cannot work
	// without it (a node of an IPv4 cluster), where a late address would
	// otherwise fail the boot.
	RequireLocalIPv4 bool
	// AttemptTimeout bounds each attempt at a path; zero or less means
	// DefaultAttemptTimeout.
	AttemptTimeout time.Duration
	// MinBackoff and MaxBackoff bound the jittered exponential backoff
	// between attempts; zero or less means DefaultMinBackoff and
	// DefaultMaxBackoff.
	MinBackoff, MaxBackoff time.Duration
}

// withDefaults returns o with its zero durations set to the defaults.
func (o Options) withDefaults() Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.Timeout, DefaultTimeout)
	def(&o.AttemptTimeout, DefaultAttemptTimeout)
	def(&o.MinBackoff, DefaultMinBackoff)
	def(&o.MaxBackoff, DefaultMaxBackoff)
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = o.MinBackoff
	}
	return o
}

// PathError is the error Fetch returns for a path that could not be read or
// whose answer is not valid.
type PathError struct {
	Path     string // e.g. "latest/meta-data/instance-type"
	Attempts int    // attempts made at the path
	Status   int    // the last HTTP status the path answered, 0 if none
	Err      error
}

// Error returns "imds: PATH: reason".
func (e *PathError) Error() string { return "imds: " + e.Path + ": " + e.Err.Error() }

// Unwrap returns the reason.
func (e *PathError) Unwrap() error { return e.Err }

// query is one path to read: parse checks the body and stores the value; a
// 404 of an optional path leaves the value empty; then, on success, lists the
// queries that need this one's value (they run in parallel).
type query struct {
	path     string
	optional bool
	parse    func(body string) error
	then     func() []query
}

// Fetch reads the instance's Facts from IMDS: the identity document first
// (which gets the session token), then, in parallel, the paths for what the
// document lacks, each interface path as soon as the MAC is known. Every
// failure names the path it concerns; when a path fails for good the others
// are abandoned, and the failures are joined in a fixed order.
//
// The errors and warnings quote the service's answers scrubbed of secrets
// (scrub.Text): a service that echoes the session token shows none of it.
func Fetch(ctx context.Context, opts Options) (*Facts, error) {
	f, err := fetch(ctx, opts, fetchMode{})
	return f, scrub.Err(err)
}

// fetchMode is how fetch reads, for tests and the benchmark: sequential reads
// one path at a time; via, when set, gives the client's reads in place of its
// own get (oracle_test.go: aws-sdk-go-v2's client).
type fetchMode struct {
	sequential bool
	via        func(c *client) func(ctx context.Context, path string) (string, error)
}

// fetch is Fetch, read as mode says.
func fetch(ctx context.Context, opts Options, mode fetchMode) (*Facts, error) {
	if opts.Endpoint != "" {
		if _, err := checkEndpoint(opts.Endpoint); err != nil {
			return nil, fmt.Errorf("imds: endpoint %s: %w", excerpt(opts.Endpoint), err)
		}
	}
	opts = opts.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	c := newClient(opts)
	c.sequential = mode.sequential
	if mode.via != nil {
		c.via = mode.via(c)
	}
	defer c.close()

	// The identity document goes first, alone: it gets the session token the
	// later requests share, so a service that gives no token fails once here
	// rather than once per path.
	var id Identity
	document := query{path: PathIdentityDocument, parse: func(b string) error {
		var err error
		id, err = parseIdentityDocument(b)
		return err
	}}
	if err := c.read(ctx, document); err != nil {
		return nil, err
	}
	if opts.OnIdentity != nil {
		opts.OnIdentity(id)
	}
	f := &Facts{
		Region: id.Region, AccountID: id.AccountID, InstanceID: id.InstanceID,
		InstanceType: id.InstanceType, AvailabilityZone: id.AvailabilityZone, LocalIPv4: id.PrivateIP,
	}
	rest := []query{
		{path: PathDomain, optional: true, parse: parseDomain(&f.Domain, f.Region)},
		{path: PathMAC, parse: into(&f.MAC, parseMAC), then: func() []query {
			qs := []query{{path: PathVPCIPv4CIDRs(f.MAC), parse: intoList(&f.VPCIPv4CIDRs, parseIPv4CIDR)}}
			if opts.IPv6 {
				qs = append(qs, query{path: PathIPv6s(f.MAC), optional: true, parse: intoList(&f.IPv6s, parseIPv6)})
			}
			return qs
		}},
		{path: PathLocalHostname, optional: true, parse: parseHostname(&f.LocalHostname, func(w string) { f.Warnings = append(f.Warnings, w) })},
	}
	// What the document lacks, from meta-data. A real document has all of it.
	for _, q := range []struct {
		have bool
		q    query
	}{
		{f.InstanceType != "", query{path: PathInstanceType, parse: into(&f.InstanceType, parseInstanceType)}},
		{f.InstanceID != "", query{path: PathInstanceID, parse: into(&f.InstanceID, parseInstanceID)}},
		{f.AvailabilityZone != "", query{path: PathAvailabilityZone, parse: into(&f.AvailabilityZone, parseZone(f.Region))}},
		{f.LocalIPv4 != "", query{path: PathLocalIPv4, optional: !opts.RequireLocalIPv4, parse: into(&f.LocalIPv4, parseIPv4)}},
	} {
		if !q.have {
			rest = append(rest, q.q)
		}
	}
	if opts.UserData {
		rest = append(rest, query{path: PathUserData, optional: true, parse: func(b string) error {
			f.UserData = []byte(b)
			return nil
		}})
	}
	if err := c.readAll(ctx, rest); err != nil {
		return nil, err
	}
	return f, nil
}

// readAll runs the queries in parallel (and each one's follow-ups after it)
// and joins their errors in query order. The first failure cancels the
// others; their cancellation is not reported as a failure of their own.
func (c *client) readAll(ctx context.Context, qs []query) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	errs := make([]error, len(qs))
	var wg sync.WaitGroup
	for i, q := range qs {
		one := func() {
			err := c.read(ctx, q)
			if err == nil && q.then != nil {
				err = c.readAll(ctx, q.then())
			}
			if err != nil && !errors.Is(err, errAbandoned) {
				cancel(errAbandoned)
				errs[i] = err
			}
		}
		if c.sequential {
			one()
		} else {
			wg.Go(one)
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}
