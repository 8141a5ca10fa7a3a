package ec2test

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// namespace is the XML namespace of EC2 API version 2016-11-15.
const namespace = "http://ec2.amazonaws.com/doc/2016-11-15/"

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm() // a malformed body leaves Action empty: InvalidAction below
	action := r.Form.Get("Action")
	status, body := s.answer(r.Method, r.URL.Path, action, r.Form)
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// answer returns the status and XML body for one request.
func (s *Server) answer(method, path, action string, form url.Values) (int, []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[action]++
	over, limitErr := s.limited(action, time.Now())
	switch e, failing := s.answers.Errors[action]; {
	case method != http.MethodPost:
		return s.errorXML(http.StatusMethodNotAllowed, "InvalidAction", "method "+method+" is not supported; use POST")
	case path != "/":
		return s.errorXML(http.StatusNotFound, "InvalidAction", "no such path "+path)
	case failing:
		return s.errorXML(e.Status, e.Code, e.Message)
	case over:
		return s.errorXML(limitErr.Status, limitErr.Code, limitErr.Message)
	case action == "DescribeInstances":
		return s.describeInstances(form)
	case action == "DescribeInstanceTypes":
		return s.describeInstanceTypes(form)
	default:
		return s.errorXML(http.StatusBadRequest, "InvalidAction", "The action "+action+" is not valid for this web service.")
	}
}

func (s *Server) describeInstances(form url.Values) (int, []byte) {
	ids := indexed(form, "InstanceId")
	var missing []string
	for _, id := range ids {
		if !slices.ContainsFunc(s.answers.Instances, func(in Instance) bool { return in.ID == id }) {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return s.errorXML(http.StatusBadRequest, "InvalidInstanceID.NotFound",
			"The instance ID '"+strings.Join(missing, "', '")+"' does not exist")
	}
	insts := s.answers.Instances
	if len(ids) > 0 {
		insts = slices.DeleteFunc(slices.Clone(insts), func(in Instance) bool { return !slices.Contains(ids, in.ID) })
	}
	for _, f := range filters(form) {
		var field func(Instance) string
		switch f.name {
		case "instance-id":
			field = func(in Instance) string { return in.ID }
		case "private-dns-name":
			field = func(in Instance) string { return in.PrivateDNSName }
		default:
			return s.errorXML(http.StatusBadRequest, "InvalidParameterValue", "The filter '"+f.name+"' is invalid")
		}
		insts = slices.DeleteFunc(slices.Clone(insts), func(in Instance) bool { return !slices.Contains(f.values, field(in)) })
	}
	resp := describeInstancesResponse{Xmlns: namespace, RequestID: s.requestID()}
	if len(insts) > 0 {
		res := reservationXML{ReservationID: "r-0123456789abcdef0", OwnerID: "111122223333"}
		for _, in := range insts {
			res.Instances = append(res.Instances, instanceXML{
				InstanceID:     in.ID,
				State:          stateXML{Code: 16, Name: "running"},
				PrivateDNSName: in.PrivateDNSName,
			})
		}
		resp.Reservations.Items = []reservationXML{res}
	}
	return marshal(http.StatusOK, resp)
}

func (s *Server) describeInstanceTypes(form url.Values) (int, []byte) {
	names := indexed(form, "InstanceType")
	var unknown []string
	for _, n := range names {
		if _, ok := s.answers.Types[n]; !ok {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		return s.errorXML(http.StatusBadRequest, "InvalidInstanceType",
			"The following supplied instance types do not exist: ["+strings.Join(unknown, ", ")+"]")
	}
	if len(names) == 0 {
		for n := range s.answers.Types {
			names = append(names, n)
		}
		sort.Strings(names)
	}
	for _, f := range filters(form) {
		if f.name != "instance-type" {
			return s.errorXML(http.StatusBadRequest, "InvalidParameterValue", "The filter '"+f.name+"' is invalid")
		}
		names = slices.DeleteFunc(names, func(n string) bool {
			return !slices.ContainsFunc(f.values, func(pattern string) bool { return globMatch(pattern, n) })
		})
	}
	resp := describeInstanceTypesResponse{Xmlns: namespace, RequestID: s.requestID()}
	for _, n := range names {
		resp.InstanceTypes.Items = append(resp.InstanceTypes.Items, instanceTypeXMLFor(n, s.answers.Types[n]))
	}
	return marshal(http.StatusOK, resp)
}

// requestID returns a fresh, deterministic request ID.
func (s *Server) requestID() string {
	s.requests++
	return fmt.Sprintf("00000000-0000-4000-8000-%012x", s.requests)
}

func (s *Server) errorXML(status int, code, message string) (int, []byte) {
	return marshal(status, errorResponse{
		Errors:    []errorXML{{Code: code, Message: message}},
		RequestID: s.requestID(),
	})
}

func marshal(status int, v any) (int, []byte) {
	b, err := xml.Marshal(v)
	if err != nil { // the response types are fixed; this is a bug in this package
		panic("ec2test: marshal response: " + err.Error())
	}
	return status, append([]byte(xml.Header), b...)
}

// indexed returns the values of prefix.1, prefix.2, ... in index order.
func indexed(form url.Values, prefix string) []string {
	type kv struct {
		i int
		v string
	}
	var found []kv
	for k, v := range form {
		rest, ok := strings.CutPrefix(k, prefix+".")
		if !ok || len(v) == 0 {
			continue
		}
		if i, err := strconv.Atoi(rest); err == nil {
			found = append(found, kv{i, v[0]})
		}
	}
	sort.Slice(found, func(a, b int) bool { return found[a].i < found[b].i })
	out := make([]string, len(found))
	for i, f := range found {
		out[i] = f.v
	}
	return out
}

type filter struct {
	name   string
	values []string
}

// filters returns Filter.N.Name with its Filter.N.Value.M, in N order.
func filters(form url.Values) []filter {
	var out []filter
	var ns []int
	for k := range form {
		mid, ok := strings.CutPrefix(k, "Filter.")
		if !ok {
			continue
		}
		num, ok := strings.CutSuffix(mid, ".Name")
		if n, err := strconv.Atoi(num); ok && err == nil {
			ns = append(ns, n)
		}
	}
	sort.Ints(ns)
	for _, n := range ns {
		p := "Filter." + strconv.Itoa(n)
		out = append(out, filter{name: form.Get(p + ".Name"), values: indexed(form, p+".Value")})
	}
	return out
}

// globMatch reports whether name matches pattern, where '*' matches any run of
// characters, as EC2 filters do.
func globMatch(pattern, name string) bool {
	re := "^" + strings.ReplaceAll(regexp.QuoteMeta(pattern), `\*`, ".*") + "$"
	return regexp.MustCompile(re).MatchString(name)
}
