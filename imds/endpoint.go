package imds

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
)

// Sources of an IMDS endpoint, in the order ResolveEndpoint consults them.
const (
	// EndpointFlag is the command-line flag that sets the endpoint.
	EndpointFlag = "--imds-endpoint"
	// EndpointEnvSDK is the AWS SDKs' variable for the endpoint (a URL).
	EndpointEnvSDK = "AWS_EC2_METADATA_SERVICE_ENDPOINT"
	// EndpointEnvBootstrap is bootstrap.sh's variable for the endpoint (host[:port]).
	EndpointEnvBootstrap = "IMDS_ENDPOINT"
)

// ResolveEndpoint picks the IMDS base URL: flagValue (the --imds-endpoint
// flag) if non-empty, else AWS_EC2_METADATA_SERVICE_ENDPOINT, else
// bootstrap.sh's IMDS_ENDPOINT (host[:port]; without a scheme it gets
// "http://"), else "" (let the SDK pick its default). getenv reads the
// environment; nil means os.Getenv.
//
// The result must be an http or https URL with a host, no path beyond "/",
// no query, fragment or user info; it is returned as "scheme://host[:port]".
// An error names the flag or variable the bad value came from.
func ResolveEndpoint(flagValue string, getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	source, value := EndpointFlag+" flag", flagValue
	if value == "" {
		source, value = EndpointEnvSDK, getenv(EndpointEnvSDK)
	}
	if value == "" {
		source, value = EndpointEnvBootstrap, getenv(EndpointEnvBootstrap)
		if value != "" && !strings.Contains(value, "://") {
			value = "http://" + value
		}
	}
	if value == "" {
		return "", nil
	}
	endpoint, err := checkEndpoint(value)
	if err != nil {
		return "", fmt.Errorf("imds: %s %s: %w", source, excerpt(value), err)
	}
	return endpoint, nil
}

// checkEndpoint validates an endpoint URL and returns it as "scheme://host[:port]".
func checkEndpoint(v string) (string, error) {
	u, err := url.Parse(v)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if len(err.Error()) > 80 { // net/url's errors quote the value
			return "", errors.New("not a URL")
		}
		return "", fmt.Errorf("not a URL: %w", err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "", errors.New("want an http:// or https:// URL")
	case u.Opaque != "" || u.Hostname() == "":
		return "", errors.New("URL has no host")
	case len(u.Hostname()) > 253:
		return "", fmt.Errorf("host name of %d bytes, longer than any DNS name (253)", len(u.Hostname()))
	case u.User != nil:
		return "", errors.New("URL must not carry user info")
	case u.Path != "" && u.Path != "/":
		return "", fmt.Errorf("URL must not have a path, has %s", excerpt(u.Path))
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.ContainsAny(v, "?#"):
		return "", errors.New("URL must not have a query or fragment")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("bad port %s", excerpt(p))
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return "", errors.New("empty port")
	}
	return u.Scheme + "://" + u.Host, nil
}
