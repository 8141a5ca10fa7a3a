package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// version is a build's version, from git: the last release tag vX.Y.Z (or
// vX.Y.Z-PRE) before the commit, the commits since it and the commit's hash, and
// whether the checkout had changes.
type version struct {
	major, minor, patch int
	pre                 string // "rc.1" of v0.3.0-rc.1; "" for a release
	tagged              bool   // false: no release tag before the commit
	commits             int    // since the tag; with no tag, from the first commit on
	hash                string // the commit, abbreviated to 12 hex digits
	dirty               bool
}

// tagPattern is a release tag: vX.Y.Z, or vX.Y.Z-PRE with PRE of letters, digits and
// dots (the only characters RPM's and DEB's version grammars share with SemVer's).
var tagPattern = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(?:-([0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*))?$`)

// describePattern is `git describe --long --abbrev=12`'s answer: TAG-N-gHASH.
var describePattern = regexp.MustCompile(`^(.+)-([0-9]+)-g([0-9a-f]{12})$`)

// parseDescribe reads the answer of `git describe --tags --long --abbrev=12
// --match 'v[0-9]*'`.
func parseDescribe(describe string, dirty bool) (version, error) {
	m := describePattern.FindStringSubmatch(describe)
	if m == nil {
		return version{}, fmt.Errorf("git describe %q: want TAG-N-gHASH", describe)
	}
	v, err := parseTag(m[1])
	if err != nil {
		return version{}, err
	}
	v.tagged = true
	v.commits, _ = strconv.Atoi(m[2]) // digits, by the pattern
	v.hash = m[3]
	v.dirty = dirty
	return v, nil
}

// untagged is the version of a commit with no release tag before it: 0.0.0, the
// number of commits up to it (git rev-list --count), so that later commits have
// later versions, and its hash.
func untagged(commits int, hash string, dirty bool) version {
	return version{commits: commits, hash: hash, dirty: dirty}
}

// parseTag reads a release tag.
func parseTag(tag string) (version, error) {
	m := tagPattern.FindStringSubmatch(tag)
	if m == nil {
		return version{}, fmt.Errorf("tag %q is not a release tag vX.Y.Z or vX.Y.Z-PRE (PRE: letters, digits, dots)", tag)
	}
	var v version
	for i, p := range []*int{&v.major, &v.minor, &v.patch} {
		n, err := strconv.Atoi(m[i+1])
		if err != nil {
			return version{}, fmt.Errorf("tag %q: %w", tag, err)
		}
		*p = n
	}
	v.pre = m[4]
	return v, nil
}

// build is what follows "+": the commits since the tag and the hash, and "dirty";
// "" for a clean checkout at a release tag.
func (v version) build() string {
	var parts []string
	if !v.tagged || v.commits > 0 {
		parts = append(parts, strconv.Itoa(v.commits), "g"+v.hash)
	}
	if v.dirty {
		parts = append(parts, "dirty")
	}
	return strings.Join(parts, ".")
}

// Tag is the version as eksboot version prints it, in SemVer with a v, as the git
// tag: v0.3.0, v0.3.0-rc.1, v0.3.0+4.g0123456789ab (four commits after v0.3.0),
// v0.0.0+120.g0123456789ab (no tag yet), v0.3.0+dirty.
func (v version) Tag() string {
	s := fmt.Sprintf("v%d.%d.%d", v.major, v.minor, v.patch)
	if v.pre != "" {
		s += "-" + v.pre
	}
	if b := v.build(); b != "" {
		s += "+" + b
	}
	return s
}

// Package is the version in the packages' metadata, valid in RPM's Version (no "-")
// and in Debian's upstream version, and ordered alike by rpm and dpkg: a
// pre-release's "-" becomes "~", which both sort before the release, and the build
// part after "+" sorts after it, by the number of commits.
func (v version) Package() string {
	return strings.Replace(strings.TrimPrefix(v.Tag(), "v"), "-", "~", 1)
}
