// Command floor-bootstrap is the least a bootstrap can do, for BenchmarkProcess to
// measure eksboot against: it makes only the IMDS requests a node's bootstrap needs
// (the IMDSv2 token, the identity document, then the MAC and services/domain side by
// side and the VPC CIDRs of the MAC; no EC2 call) and writes the files eksboot wrote
// for the same instance, atomically (a temporary file, fsync, rename, then an fsync
// of each changed directory), with net/http and nothing else. It computes nothing:
// the files are copied from REF, a root eksboot configured before the timing.
//
// Usage: floor-bootstrap IMDS_URL REF ROOT
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: floor-bootstrap IMDS_URL REF ROOT")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], os.Args[3]); err != nil {
		fmt.Fprintln(os.Stderr, "floor-bootstrap:", err)
		os.Exit(1)
	}
}

func run(endpoint, ref, root string) error {
	c := &http.Client{Timeout: 5 * time.Second}
	req, err := http.NewRequest(http.MethodPut, endpoint+"/latest/api/token", nil)
	if err != nil {
		return err
	}
	req.Header.Set("X-aws-ec2-metadata-token-ttl-seconds", "21600")
	token, err := do(c, req)
	if err != nil {
		return err
	}
	get := func(path string) (string, error) {
		req, err := http.NewRequest(http.MethodGet, endpoint+"/latest/"+path, nil)
		if err != nil {
			return "", err
		}
		req.Header.Set("X-aws-ec2-metadata-token", token)
		return do(c, req)
	}
	doc, err := get("dynamic/instance-identity/document")
	if err != nil {
		return err
	}
	var id struct{ Region, InstanceType, PrivateIP string }
	if err := json.Unmarshal([]byte(doc), &id); err != nil || id.Region == "" {
		return fmt.Errorf("identity document: %v", err)
	}
	var mac, domain string
	var macErr, domainErr error
	var wg sync.WaitGroup
	wg.Go(func() { mac, macErr = get("meta-data/mac") })
	wg.Go(func() { domain, domainErr = get("meta-data/services/domain") })
	wg.Wait()
	if macErr != nil || domainErr != nil || domain == "" {
		return fmt.Errorf("mac: %v, domain: %v", macErr, domainErr)
	}
	if _, err := get("meta-data/network/interfaces/macs/" + strings.TrimSpace(mac) + "/vpc-ipv4-cidr-blocks"); err != nil {
		return err
	}
	return copyTree(ref, root)
}

func do(c *http.Client, req *http.Request) (string, error) {
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s %s: %s", req.Method, req.URL.Path, resp.Status)
	}
	return string(b), nil
}

// copyTree writes every regular file of ref at the same path under root: each
// into a temporary file beside it and fsynced, all at once, then the renames, then
// an fsync of each directory written into, all at once (as eksboot's writes do).
func copyTree(ref, root string) error {
	type file struct {
		dst, tmp string
		data     []byte
		mode     os.FileMode
	}
	var files []*file
	dirs := map[string]bool{}
	err := filepath.WalkDir(ref, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(ref, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		dst := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		dirs[filepath.Dir(dst)] = true
		files = append(files, &file{dst: dst, data: b, mode: info.Mode().Perm()})
		return nil
	})
	if err != nil {
		return err
	}
	errs := make(chan error, len(files)+len(dirs))
	var wg sync.WaitGroup
	for _, f := range files {
		wg.Go(func() {
			var err error
			f.tmp, err = writeTemp(f.dst, f.data, f.mode)
			errs <- err
		})
	}
	wg.Wait()
	for range files {
		if err := <-errs; err != nil {
			return err
		}
	}
	for _, f := range files {
		if err := os.Rename(f.tmp, f.dst); err != nil {
			return err
		}
	}
	for d := range dirs {
		wg.Go(func() { errs <- syncDir(d) })
	}
	wg.Wait()
	for range dirs {
		if err := <-errs; err != nil {
			return err
		}
	}
	return nil
}

// writeTemp writes b into a new temporary file beside dst, fsynced, and returns
// its name.
func writeTemp(dst string, b []byte, mode os.FileMode) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-")
	if err != nil {
		return "", err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

func syncDir(d string) error {
	f, err := os.Open(d)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
