package sim

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/eksboot/eksboot/internal/yamljson"
	"github.com/eksboot/eksboot/userdata"

	yamlv3 "go.yaml.in/yaml/v3"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// step is one thing cloud-init does with a part.
type step struct {
	part userdata.Part
	run  func(ctx context.Context, s *sim) error
}

// cloudConfig is the part of #cloud-config render simulates.
type cloudConfig struct {
	WriteFiles []writeFile `yaml:"write_files"`
	RunCmd     []any       `yaml:"runcmd"`
	BootCmd    []any       `yaml:"bootcmd"`
}

type writeFile struct {
	Path        string `yaml:"path"`
	Content     string `yaml:"content"`
	Encoding    string `yaml:"encoding"`
	Permissions any    `yaml:"permissions"`
	Owner       string `yaml:"owner"`
	Append      bool   `yaml:"append"`
	Defer       bool   `yaml:"defer"`
}

// simulatedKeys are the cloud-config keys render evaluates; a key with no effect on
// the node's bootstrap is listed as not simulated.
var simulatedKeys = []string{"write_files", "runcmd", "bootcmd"}

// cloudInitOrder is what cloud-init does with the parts, in its order: boothooks
// (init stage), bootcmd, write_files, deferred write_files, then in the final stage
// the shell scripts (part-001, part-002, ... in document order) and runcmd, which
// sorts after them. Several cloud-config parts are merged as cloud-init's default
// merge does: a later part's key replaces an earlier one's.
func cloudInitOrder(parts []userdata.Part) []step {
	var hooks, scripts []step
	var cc cloudConfig
	have := map[string]userdata.Part{}
	var errSteps []step
	for _, p := range parts {
		switch {
		case p.ContentType == userdata.TypeBoothook:
			hooks = append(hooks, scriptStep(p, "boothook"))
		case isScript(p):
			scripts = append(scripts, scriptStep(p, ""))
		case p.ContentType == userdata.TypeCloudConfig:
			var keys map[string]yamlv3.Node
			var one cloudConfig
			// yaml/v3 expands aliases into the values it decodes: bounded first.
			err := yamljson.CheckExpansion(p.Body)
			if err == nil {
				err = yamlv3.Unmarshal(p.Body, &keys)
			}
			if err != nil {
				errSteps = append(errSteps, step{p, func(context.Context, *sim) error {
					return fmt.Errorf("%s: cloud-config: %v", p.Name(), err)
				}})
				continue
			}
			if err := yamlv3.Unmarshal(p.Body, &one); err != nil {
				errSteps = append(errSteps, step{p, func(context.Context, *sim) error {
					return fmt.Errorf("%s: cloud-config: %v", p.Name(), err)
				}})
				continue
			}
			names := make([]string, 0, len(keys))
			for k := range keys {
				names = append(names, k)
			}
			sort.Strings(names)
			for _, k := range names {
				have[k] = p
			}
			if _, ok := keys["write_files"]; ok {
				cc.WriteFiles = one.WriteFiles
			}
			if _, ok := keys["runcmd"]; ok {
				cc.RunCmd = one.RunCmd
			}
			if _, ok := keys["bootcmd"]; ok {
				cc.BootCmd = one.BootCmd
			}
			others := []string{}
			for _, k := range names {
				if n := keys[k]; !slices.Contains(simulatedKeys, k) && (n.Kind != yamlv3.ScalarNode || n.Tag != "!!null") {
					others = append(others, k)
				}
			}
			if len(others) > 0 {
				p := p
				hooks = append(hooks, step{p, func(_ context.Context, s *sim) error {
					for _, k := range others {
						s.noteNotSimulated("cloud-config " + k)
					}
					s.note("cloud-config keys not simulated: %s", strings.Join(others, ", "))
					return nil
				}})
			}
		}
	}
	out := append(errSteps, hooks...)
	if len(cc.BootCmd) > 0 {
		out = append(out, commandsStep(have["bootcmd"], "bootcmd", cc.BootCmd))
	}
	for _, deferred := range []bool{false, true} {
		var files []writeFile
		for _, f := range cc.WriteFiles {
			if f.Defer == deferred {
				files = append(files, f)
			}
		}
		if len(files) > 0 {
			out = append(out, writeFilesStep(have["write_files"], files, deferred))
		}
	}
	out = append(out, scripts...)
	if len(cc.RunCmd) > 0 {
		out = append(out, commandsStep(have["runcmd"], "runcmd", cc.RunCmd))
	}
	return out
}

func scriptStep(p userdata.Part, kind string) step {
	return step{p, func(ctx context.Context, s *sim) error {
		name := p.Name()
		if kind != "" {
			name += " " + kind
		}
		body := bytes.ReplaceAll(p.Body, []byte("\r\n"), []byte("\n"))
		first, _, _ := strings.Cut(string(body), "\n")
		if strings.HasPrefix(first, "#!") && !isShellLine(first) {
			s.noteNotSimulated(strings.TrimSpace(strings.TrimPrefix(first, "#!")))
			s.note("a %s script: not simulated", strings.TrimPrefix(first, "#!"))
			return nil
		}
		code, err := s.runScript(ctx, nil, name, fmt.Sprintf("/var/lib/cloud/instance/scripts/part-%03d", p.Index), body, nil, expand.ListEnviron(bootEnv...), "/", nil, s.stdout, s.stdout)
		if err != nil {
			return err
		}
		if code != 0 {
			s.note("the script exits with status %d (cloud-init logs it and goes on)%s", code, s.stdout.lastOutput())
		}
		return nil
	}}
}

// commandsStep runs runcmd or bootcmd as cloud-init does: one sh script, a string
// item as a line as it is, a list item as its words quoted.
func commandsStep(p userdata.Part, key string, items []any) step {
	return step{p, func(ctx context.Context, s *sim) error {
		var b strings.Builder
		b.WriteString("#!/bin/sh\n")
		for i, it := range items {
			switch v := it.(type) {
			case string:
				b.WriteString(v)
			case []any:
				for j, w := range v {
					q, err := syntax.Quote(fmt.Sprint(w), syntax.LangBash)
					if err != nil {
						return fmt.Errorf("%s: cloud-config %s item %d: %v", p.Name(), key, i+1, err)
					}
					if j > 0 {
						b.WriteByte(' ')
					}
					b.WriteString(q)
				}
			default:
				return fmt.Errorf("%s: cloud-config %s item %d: want a string or a list of words", p.Name(), key, i+1)
			}
			b.WriteByte('\n')
		}
		env := bootEnv
		if key == "bootcmd" {
			if id, ok := s.opts.Metadata("meta-data/instance-id"); ok {
				env = append(slices.Clone(env), "INSTANCE_ID="+id)
			}
		}
		code, err := s.runScript(ctx, nil, p.Name()+" "+key, "/var/lib/cloud/instance/scripts/"+key, []byte(b.String()), nil, expand.ListEnviron(env...), "/", nil, s.stdout, s.stdout)
		if err != nil {
			return err
		}
		s.note("%s: %d commands", key, len(items))
		if code != 0 {
			s.note("%s exits with status %d (cloud-init logs it and goes on)%s", key, code, s.stdout.lastOutput())
		}
		return nil
	}}
}

func writeFilesStep(p userdata.Part, files []writeFile, deferred bool) step {
	return step{p, func(_ context.Context, s *sim) error {
		key := "write_files"
		if deferred {
			key += " (defer)"
		}
		for i, f := range files {
			where := fmt.Sprintf("%s: cloud-config %s item %d", p.Name(), key, i+1)
			if f.Path == "" || !path.IsAbs(f.Path) {
				return fmt.Errorf("%s: path %q: want an absolute path", where, f.Path)
			}
			data, err := decodeContent(f.Content, f.Encoding, s)
			if err != nil {
				return fmt.Errorf("%s (%s): %w", where, f.Path, err)
			}
			mode, err := filePerm(f.Permissions)
			if err != nil {
				return fmt.Errorf("%s (%s): permissions: %w", where, f.Path, err)
			}
			if err := s.fs.write(f.Path, data, f.Append, mode); err != nil {
				return err
			}
			if !f.Append {
				s.fs.setMode(path.Clean(f.Path), func(fs.FileMode) fs.FileMode { return mode })
			}
			s.note("%s: writes %s", key, f.Path)
		}
		return nil
	}}
}

// decodeContent is cloud-init's write_files encodings.
func decodeContent(content, enc string, s *sim) ([]byte, error) {
	b := []byte(content)
	e := strings.ToLower(strings.TrimSpace(enc))
	b64 := func() error {
		out, err := base64.StdEncoding.DecodeString(userdata.StripSpace(b))
		if err != nil {
			return fmt.Errorf("encoding %s: %w", enc, err)
		}
		b = out
		return nil
	}
	gz := func() error {
		out, err := userdata.Gunzip(b, userdata.MaxDecoded)
		if err != nil {
			return fmt.Errorf("encoding %s: gzip: %w", enc, err)
		}
		b = out
		return nil
	}
	switch e {
	case "", "text/plain":
	case "b64", "base64":
		if err := b64(); err != nil {
			return nil, err
		}
	case "gz", "gzip":
		if err := gz(); err != nil {
			return nil, err
		}
	case "gz+b64", "gz+base64", "gzip+b64", "gzip+base64":
		if err := b64(); err != nil {
			return nil, err
		}
		if err := gz(); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("encoding %q: want b64, base64, gz, gzip or gz+b64", enc)
	}
	return b, nil
}

// filePerm is write_files' permissions: an octal string ("0644") or a number.
func filePerm(v any) (fs.FileMode, error) {
	switch p := v.(type) {
	case nil:
		return 0o644, nil
	case int:
		return fs.FileMode(p) & fs.ModePerm, nil
	case string:
		n, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(p), "0o"), 8, 32)
		if err != nil {
			return 0, fmt.Errorf("%q: want an octal mode such as \"0644\"", p)
		}
		return fs.FileMode(n) & fs.ModePerm, nil
	}
	return 0, fmt.Errorf("%v: want an octal mode such as \"0644\"", v)
}
