package eksapitest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The account and role the fake's answers name.
const (
	account = "111122223333"
	region  = "us-west-2"
)

type describeClusterJSON struct {
	Cluster clusterJSON `json:"cluster"`
}

type clusterJSON struct {
	Name                    string         `json:"name"`
	Arn                     string         `json:"arn"`
	CreatedAt               float64        `json:"createdAt"`
	Version                 string         `json:"version"`
	Endpoint                *string        `json:"endpoint"`
	RoleArn                 string         `json:"roleArn"`
	Status                  string         `json:"status"`
	CertificateAuthority    caJSON         `json:"certificateAuthority"`
	KubernetesNetworkConfig networkJSON    `json:"kubernetesNetworkConfig"`
	PlatformVersion         string         `json:"platformVersion"`
	ID                      *string        `json:"id,omitempty"`
	OutpostConfig           *outpostConfig `json:"outpostConfig,omitempty"`
}

type caJSON struct {
	Data *string `json:"data,omitempty"`
}

type networkJSON struct {
	ServiceIPv4CIDR *string `json:"serviceIpv4Cidr"`
	ServiceIPv6CIDR *string `json:"serviceIpv6Cidr,omitempty"`
	IPFamily        string  `json:"ipFamily,omitempty"`
}

type outpostConfig struct {
	OutpostArns              []string `json:"outpostArns"`
	ControlPlaneInstanceType string   `json:"controlPlaneInstanceType"`
}

type errorJSON struct {
	Type        string `json:"__type"`
	Message     string `json:"message"`
	ClusterName string `json:"clusterName,omitempty"`
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	_, cred, _ := strings.Cut(r.Header.Get("Authorization"), "Credential=")
	key, _, _ := strings.Cut(cred, "/")
	s.mu.Lock()
	s.accessKey = key
	s.mu.Unlock()
	status, body, hang := s.answer(r.Method, r.URL.Path, time.Now())
	if hang {
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	if status != http.StatusOK {
		var e errorJSON
		_ = json.Unmarshal(body, &e)
		w.Header().Set("X-Amzn-Errortype", e.Type)
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// answer returns the status and JSON body for one request, or hang.
func (s *Server) answer(method, path string, now time.Time) (status int, body []byte, hang bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	name, ok := strings.CutPrefix(path, "/clusters/")
	switch {
	case s.hang:
		return 0, nil, true
	case method != http.MethodGet || !ok || name == "" || strings.Contains(name, "/"):
		return errorBody(http.StatusNotFound, "UnknownOperationException", "", method+" "+path+" is not an operation of this fake (only DescribeCluster: GET /clusters/{name})")
	case s.throttleN > 0:
		s.throttleN--
		s.throttled++
		return errorBody(http.StatusTooManyRequests, "ThrottlingException", name, "Rate exceeded")
	case !s.allow(now):
		s.throttled++
		return errorBody(http.StatusTooManyRequests, "ThrottlingException", name, "Rate exceeded")
	case s.fixed != nil:
		return errorBody(s.fixed.status, s.fixed.code, "", s.fixed.message)
	}
	c, ok := s.clusters[name]
	if !ok {
		return errorBody(http.StatusNotFound, "ResourceNotFoundException", name, "No cluster found for name: "+name+".")
	}
	st := "ACTIVE"
	if n := len(c.Statuses); n > 0 {
		st = c.Statuses[min(c.answered, n-1)]
	}
	c.answered++
	b, err := json.Marshal(describeClusterJSON{Cluster: clusterFor(&c.Cluster, st)})
	if err != nil { // the types are fixed; this is a bug in this package
		panic("eksapitest: marshal answer: " + err.Error())
	}
	return http.StatusOK, b, false
}

// clusterFor is the JSON of c in status st.
func clusterFor(c *Cluster, st string) clusterJSON {
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	j := clusterJSON{
		Name:            c.Name,
		Arn:             "arn:aws:eks:" + region + ":" + account + ":cluster/" + c.Name,
		CreatedAt:       1767225600,
		Version:         "1.33",
		RoleArn:         "arn:aws:iam::" + account + ":role/eks-cluster",
		Status:          st,
		PlatformVersion: "eks.5",
		ID:              opt(c.ID),
		KubernetesNetworkConfig: networkJSON{
			ServiceIPv4CIDR: opt(c.ServiceIPv4CIDR),
			ServiceIPv6CIDR: opt(c.ServiceIPv6CIDR),
			IPFamily:        c.IPFamily,
		},
	}
	if st != "CREATING" {
		j.Endpoint, j.CertificateAuthority.Data = opt(c.Endpoint), opt(c.CAData)
	}
	if c.OutpostARN != "" {
		j.OutpostConfig = &outpostConfig{OutpostArns: []string{c.OutpostARN}, ControlPlaneInstanceType: "m5.large"}
	}
	return j
}

func errorBody(status int, code, cluster, message string) (int, []byte, bool) {
	b, err := json.Marshal(errorJSON{Type: code, Message: message, ClusterName: cluster})
	if err != nil {
		panic("eksapitest: marshal error: " + err.Error())
	}
	return status, b, false
}
