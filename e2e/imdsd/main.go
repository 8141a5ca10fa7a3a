// Command imdsd serves imdstest's fake instance metadata service as a process, for
// the node in a box of make e2e (e2e/README.md): a systemd unit in the box starts it
// on a loopback address before cloud-init and eksboot, which both read the instance's
// facts and user data from it.
//
// cloud-init's EC2 data source asks for dated API versions (/2021-03-23/meta-data/...)
// where eksboot asks for /latest/; the fake serves /latest/, so a dated prefix is
// answered as /latest/. With -imdsv1, requests without a session token are answered
// too: cloud-init asks for a token only on a machine it identifies as EC2 from its
// DMI data, and a container has none. It tells systemd it is ready (Type=notify)
// once it listens.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/eksboot/eksboot/imds/imdstest"
)

// datedPrefix matches the API version that starts a path, as in /2021-03-23/meta-data/.
var datedPrefix = regexp.MustCompile(`^/[0-9]{4}-[0-9]{2}-[0-9]{2}(/|$)`)

func main() {
	listen := flag.String("listen", "127.0.0.1:1338", "address to serve on")
	instance := flag.String("instance", "/etc/e2e/instance.json", "the instance as JSON (imdstest.Instance, as in a golden case's \"imds\" object)")
	v1 := flag.Bool("imdsv1", false, "also answer requests without a session token (IMDSv1)")
	flag.Parse()
	if err := run(*listen, *instance, *v1); err != nil {
		fmt.Fprintln(os.Stderr, "imdsd:", err)
		os.Exit(1)
	}
}

func run(listen, instancePath string, v1 bool) error {
	b, err := os.ReadFile(instancePath)
	if err != nil {
		return err
	}
	var inst imdstest.Instance
	if err := json.Unmarshal(b, &inst); err != nil {
		return fmt.Errorf("%s: %w", instancePath, err)
	}
	// The fake also listens on a port of its own choosing; only its handler is used.
	fake, err := imdstest.NewServer(inst)
	if err != nil {
		return err
	}
	fake.SetIMDSv1(v1)
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	if err := notifyReady(); err != nil {
		return err
	}
	srv := &http.Server{Handler: latest(fake), ReadHeaderTimeout: 10 * time.Second}
	return srv.Serve(ln)
}

// latest serves a dated API path (/2021-03-23/meta-data/...) as /latest/....
func latest(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// imdstest reads the path from RequestURI.
		if loc := datedPrefix.FindStringIndex(r.RequestURI); loc != nil {
			r.RequestURI = "/latest/" + r.RequestURI[loc[1]:]
			r.URL.Path = "/latest/" + strings.TrimPrefix(r.URL.Path[min(loc[1], len(r.URL.Path)):], "/")
		}
		h.ServeHTTP(w, r)
	})
}

// notifyReady sends READY=1 to systemd when it asked for it (NOTIFY_SOCKET).
func notifyReady() error {
	addr := os.Getenv("NOTIFY_SOCKET")
	if addr == "" {
		return nil
	}
	if addr[0] == '@' {
		addr = "\x00" + addr[1:]
	}
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		return fmt.Errorf("notify systemd: %w", err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("READY=1")); err != nil {
		return errors.Join(errors.New("notify systemd"), err)
	}
	return nil
}
