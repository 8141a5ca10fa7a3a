package imds_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eksboot/eksboot/imds"
	"github.com/eksboot/eksboot/imds/imdstest"
)

// oracleCase is one run of Fetch against a fake with faults, made once with the
// own client and once with aws-sdk-go-v2's (imds.FetchWithSDK).
type oracleCase struct {
	name      string
	faults    map[string][]imdstest.Fault // path (no leading "/") -> faults
	overrides map[string]*string          // path -> body (nil: 404)
	serverV1  bool                        // the fake answers GETs without a token
	allowV1   bool                        // Options.AllowIMDSv1
	userData  bool                        // Options.UserData
	ipv6      bool                        // Options.IPv6
}

// oracleOutcome is what one run gave: the facts or the error, and the fake's log.
type oracleOutcome struct {
	facts *imds.Facts
	err   error
	log   []string // "METHOD path status fault", sorted: parallel paths come in any order
}

func runOracleCase(t *testing.T, c oracleCase, fetch func(context.Context, imds.Options) (*imds.Facts, error)) oracleOutcome {
	t.Helper()
	s := startFake(t, imdstest.DefaultInstance())
	for p, f := range c.faults {
		s.SetFaults(p, f...)
	}
	for p, b := range c.overrides {
		s.SetOverride(p, b)
	}
	s.SetIMDSv1(c.serverV1)
	opts := fast(s, 2*time.Second)
	opts.AllowIMDSv1, opts.UserData, opts.IPv6 = c.allowV1, c.userData, c.ipv6
	f, err := fetch(context.Background(), opts)
	if cerr := s.Close(); cerr != nil { // waits for handlers still streaming an answer the client dropped
		t.Fatalf("Close: %v", cerr)
	}
	var log []string
	for _, r := range s.Requests() {
		log = append(log, fmt.Sprintf("%s %s %d %s", r.Method, r.Path, r.Status, r.Fault))
	}
	slices.Sort(log)
	return oracleOutcome{facts: f, err: err, log: log}
}

// compareWithOracle fails the test when the own client's run differs from the
// SDK's: other facts, another error (text, path, status, attempts), or other
// requests. A loose case is one whose counts are a matter of timing for either
// client (a connection closed on a reused connection is sent again by net/http
// or not; a 401 racing a parallel path's retry may make a client ask for one more
// token; a deadline): its errors are compared but for their numbers, and the
// kinds of request (each distinct line of the log), not how many.
func compareWithOracle(t *testing.T, c oracleCase, loose bool) {
	t.Helper()
	own := runOracleCase(t, c, imds.Fetch)
	sdk := runOracleCase(t, c, imds.FetchWithSDK)
	if !reflect.DeepEqual(own.facts, sdk.facts) {
		t.Errorf("%s: facts\n own %+v\n sdk %+v", c.name, own.facts, sdk.facts)
	}
	if (own.err == nil) != (sdk.err == nil) {
		t.Errorf("%s: error\n own %v\n sdk %v", c.name, own.err, sdk.err)
		return
	}
	ol, sl := own.log, sdk.log
	if own.err != nil {
		// The failure of one path abandons the others: how far they got is a
		// matter of timing. The failed path's requests are compared (onlyPathOf).
		ol, sl = onlyPathOf(ol, own.err), onlyPathOf(sl, sdk.err)
		ot, st := own.err.Error(), sdk.err.Error()
		if deadline := " deadline after "; strings.Contains(ot, deadline) && strings.Contains(st, deadline) {
			// Where the deadline cut the last attempt decides its reason: the
			// errors are compared up to it.
			loose = true
			ot, _, _ = strings.Cut(ot, deadline)
			st, _, _ = strings.Cut(st, deadline)
		}
		if loose {
			ot, st = withoutCounts(ot), withoutCounts(st)
		}
		if ot != st {
			t.Errorf("%s: error text\n own %v\n sdk %v", c.name, own.err, sdk.err)
		}
		var po, ps *imds.PathError
		if errors.As(own.err, &po) != errors.As(sdk.err, &ps) || (po != nil && (po.Path != ps.Path || po.Status != ps.Status || (!loose && po.Attempts != ps.Attempts))) {
			t.Errorf("%s: PathError own %v, sdk %v", c.name, po, ps)
		}
	}
	if loose {
		ol, sl = slices.Compact(slices.Clone(ol)), slices.Compact(slices.Clone(sl))
	}
	if !slices.Equal(ol, sl) {
		onlyOwn, onlySDK := logDiff(ol, sl)
		t.Errorf("%s: requests differ (%d own, %d SDK)\n only own %q\n only sdk %q", c.name, len(ol), len(sl), onlyOwn, onlySDK)
	}
}

// logDiff returns the lines of a not in b and of b not in a, counting repeats,
// at most ten of each.
func logDiff(a, b []string) (onlyA, onlyB []string) {
	count := map[string]int{}
	for _, l := range a {
		count[l]++
	}
	for _, l := range b {
		count[l]--
	}
	for l, n := range count {
		for ; n > 0 && len(onlyA) < 10; n-- {
			onlyA = append(onlyA, l)
		}
		for ; n < 0 && len(onlyB) < 10; n++ {
			onlyB = append(onlyB, l)
		}
	}
	slices.Sort(onlyA)
	slices.Sort(onlyB)
	return onlyA, onlyB
}

// withoutCounts replaces the numbers of a deadline's error ("after 1340 attempts") by N.
func withoutCounts(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r >= '0' && r <= '9' }), "N")
}

// onlyPathOf keeps the lines of log for the path err names, and the token PUTs
// when that path is the identity document, which is read alone: after it, the
// paths read in parallel, and which of them asks for a token before the failure
// abandons the others is a matter of timing.
func onlyPathOf(log []string, err error) []string {
	var pe *imds.PathError
	if !errors.As(err, &pe) {
		return log
	}
	return slices.DeleteFunc(slices.Clone(log), func(l string) bool {
		if strings.HasPrefix(l, "PUT ") {
			return pe.Path != imds.PathIdentityDocument
		}
		return !strings.Contains(l, " /"+pe.Path+" ")
	})
}

// TestOwnClientAgreesWithTheSDK holds the own IMDSv2 client to aws-sdk-go-v2's
// feature/ec2/imds client, which Fetch used before: for the faults of every
// path, IMDSv1 on and off on either side, the same facts or the same error, and
// the same requests seen by the fake (compareWithOracle). The named cases are the faults the other
// tests show; then seeded random ones, a fault sequence on one path and maybe on
// the token path.
func TestOwnClientAgreesWithTheSDK(t *testing.T) {
	named := []oracleCase{
		{name: "clean"},
		{name: "user data and IPv6", userData: true, ipv6: true},
		{name: "IMDSv1 server, IMDSv2 client", serverV1: true},
		{name: "token refused, IMDSv1 allowed", serverV1: true, allowV1: true, faults: map[string][]imdstest.Fault{tokenPath: {status(403)}}},
		{name: "token refused, IMDSv1 off", serverV1: true, faults: map[string][]imdstest.Fault{tokenPath: {status(403)}}},
		{name: "token 405 once, IMDSv1 allowed, the server answers IMDSv2 only", allowV1: true, faults: map[string][]imdstest.Fault{tokenPath: {times(1, status(405))}}},
		{name: "token path 400", allowV1: true, faults: map[string][]imdstest.Fault{tokenPath: {status(400)}}},
		{name: "token path closes, IMDSv1 allowed", serverV1: true, allowV1: true, faults: map[string][]imdstest.Fault{tokenPath: {times(1, closed)}}},
		{name: "token path 503 twice, IMDSv1 allowed", allowV1: true, faults: map[string][]imdstest.Fault{tokenPath: {times(2, status(503))}}},
		{name: "token redirect", faults: map[string][]imdstest.Fault{tokenPath: {{Kind: imdstest.FaultRedirect, Location: "http://127.0.0.1:9/"}}}},
		{name: "token too large", faults: map[string][]imdstest.Fault{tokenPath: {times(1, large(imds.MaxAnswer+1))}}},
		{name: "token expires", faults: map[string][]imdstest.Fault{imds.PathIdentityDocument: {times(1, expiry)}}},
		{name: "document too large", faults: map[string][]imdstest.Fault{imds.PathIdentityDocument: {large(imds.MaxIdentityDocument + 1)}}},
		{name: "user data too large", userData: true, faults: map[string][]imdstest.Fault{imds.PathUserData: {large(imds.MaxUserData + 1)}}},
		{name: "user data absent", userData: true, overrides: map[string]*string{imds.PathUserData: nil}},
		{name: "document without instance type", overrides: map[string]*string{imds.PathIdentityDocument: withoutKeys("instanceType")}, faults: map[string][]imdstest.Fault{imds.PathInstanceType: {times(2, status(404))}}},
		{name: "local-ipv4 absent", overrides: map[string]*string{imds.PathIdentityDocument: withoutKeys("privateIp"), imds.PathLocalIPv4: nil}},
		{name: "redirect of a path", faults: map[string][]imdstest.Fault{imds.PathMAC: {{Kind: imdstest.FaultRedirect, Status: 302, Location: "http://127.0.0.1:9/x"}}}},
		{name: "HTML page for good", faults: map[string][]imdstest.Fault{imds.PathDomain: {body(htmlPage)}}},
		{name: "403 of a path", faults: map[string][]imdstest.Fault{imds.PathLocalHostname: {status(403)}}},
		{name: "2xx that is not 200", faults: map[string][]imdstest.Fault{imds.PathDomain: {times(1, status(203))}}},
	}
	for _, c := range named {
		compareWithOracle(t, c, false)
	}

	n := 200
	if testing.Short() {
		n = 60
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("random cases: seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 29))
	for i := range n {
		c, racy := randomOracleCase(rng)
		c.name = fmt.Sprintf("random %d (seed %d)", i, seed)
		compareWithOracle(t, c, racy)
		if t.Failed() {
			t.Logf("case %d: %+v", i, c)
			return
		}
	}
}

// randomOracleCase draws a case: a sequence of faults on one path, maybe one on
// the token path, and random IMDSv1 settings. Faults that repeat for good are
// only those that end a path without waiting for the deadline (which would make
// the attempt counts a matter of timing). racy says a 401 may race the token.
func randomOracleCase(rng *rand.Rand) (oracleCase, bool) {
	paths := []string{imds.PathIdentityDocument, imds.PathDomain, imds.PathMAC, vpcCIDRs, imds.PathLocalHostname, imds.PathUserData}
	statuses := []int{400, 401, 403, 404, 405, 408, 429, 500, 502, 503, 504}
	bodies := []string{"", htmlPage, "not a value \x01", "   "}
	racy := false
	draw := func(path string) imdstest.Fault {
		var f imdstest.Fault
		forever := true // the fault may repeat for good
		switch k := rng.IntN(7); k {
		case 0, 1:
			s := statuses[rng.IntN(len(statuses))]
			f = status(s)
			forever = s == 400 || s == 403 || s == 405 || (s == 404 && path == imds.PathDomain)
		case 2:
			f, forever = body(bodies[rng.IntN(len(bodies))]), path != tokenPath
		case 3:
			f, forever = closed, false
			racy = true
		case 4:
			f = large(imds.MaxUserData + 1)
		case 5:
			f = imdstest.Fault{Kind: imdstest.FaultRedirect, Status: []int{301, 302, 307, 308}[rng.IntN(4)], Location: "http://127.0.0.1:9/"}
		default:
			f, forever = imdstest.Fault{Kind: imdstest.FaultDelay, Delay: time.Millisecond}, false
		}
		f.Times = 1 + rng.IntN(3)
		if forever && rng.IntN(3) == 0 {
			f.Times = 0
		}
		racy = racy || (f.Kind == imdstest.FaultStatus && f.Status == 401)
		return f
	}
	c := oracleCase{faults: map[string][]imdstest.Fault{}, serverV1: rng.IntN(3) == 0, allowV1: rng.IntN(3) == 0, userData: rng.IntN(2) == 0}
	path := paths[rng.IntN(len(paths))]
	for range 1 + rng.IntN(2) {
		f := draw(path)
		c.faults[path] = append(c.faults[path], f)
		if f.Times == 0 {
			break
		}
	}
	// A 401 of a path and a faulty token path together are left out: which of the
	// parallel paths asks for the next token, and so meets the token's fault, is a
	// matter of timing, for either client.
	if rng.IntN(3) == 0 && !racy {
		c.faults[tokenPath] = []imdstest.Fault{draw(tokenPath)}
	}
	return c, racy || c.allowV1
}

// TestOwnClientDiffersFromTheSDKOnlyWhereMeant shows the one place the own
// client departs from the SDK's on purpose: a token answer without the
// X-Aws-Ec2-Metadata-Token-Ttl-Seconds header (a proxy that drops headers) is
// an answer that is not a token, asked for again a few times, where the SDK
// failed the path at once.
func TestOwnClientDiffersFromTheSDKOnlyWhereMeant(t *testing.T) {
	fake := startFake(t, imdstest.DefaultInstance())
	strip := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		fake.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			if k != "X-Aws-Ec2-Metadata-Token-Ttl-Seconds" {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(strip.Close)
	opts := imds.Options{Endpoint: strip.URL, Timeout: 10 * time.Second, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}
	_, own := imds.Fetch(context.Background(), opts)
	_, sdk := imds.FetchWithSDK(context.Background(), opts)
	var po, ps *imds.PathError
	if !errors.As(own, &po) || po.Attempts != 3 || !strings.Contains(own.Error(), "no TTL") {
		t.Errorf("own client: %v (%+v), want the path failed after 3 invalid token answers, naming the TTL", own, po)
	}
	if !errors.As(sdk, &ps) || ps.Attempts != 1 {
		t.Errorf("SDK: %v (%+v), want the path failed at the first attempt", sdk, ps)
	}
}
