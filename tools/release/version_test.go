package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestVersionFromGit(t *testing.T) {
	for _, tc := range []struct {
		describe string
		dirty    bool
		tag, pkg string
	}{
		{"v0.3.0-0-g0123456789ab", false, "v0.3.0", "0.3.0"},
		{"v0.3.0-4-g0123456789ab", false, "v0.3.0+4.g0123456789ab", "0.3.0+4.g0123456789ab"},
		{"v0.3.0-0-g0123456789ab", true, "v0.3.0+dirty", "0.3.0+dirty"},
		{"v0.3.0-4-g0123456789ab", true, "v0.3.0+4.g0123456789ab.dirty", "0.3.0+4.g0123456789ab.dirty"},
		{"v0.3.0-rc.1-0-g0123456789ab", false, "v0.3.0-rc.1", "0.3.0~rc.1"},
		{"v0.3.0-rc.1-2-g0123456789ab", false, "v0.3.0-rc.1+2.g0123456789ab", "0.3.0~rc.1+2.g0123456789ab"},
		{"v10.20.30-0-gabcdefabcdef", false, "v10.20.30", "10.20.30"},
	} {
		v, err := parseDescribe(tc.describe, tc.dirty)
		if err != nil {
			t.Errorf("%s: %v", tc.describe, err)
			continue
		}
		if v.Tag() != tc.tag || v.Package() != tc.pkg {
			t.Errorf("%s (dirty %v): %s and %s, want %s and %s", tc.describe, tc.dirty, v.Tag(), v.Package(), tc.tag, tc.pkg)
		}
	}
	for _, tc := range []struct {
		commits  int
		dirty    bool
		tag, pkg string
	}{
		{120, false, "v0.0.0+120.g0123456789ab", "0.0.0+120.g0123456789ab"},
		{1, true, "v0.0.0+1.g0123456789ab.dirty", "0.0.0+1.g0123456789ab.dirty"},
	} {
		v := untagged(tc.commits, "0123456789ab", tc.dirty)
		if v.Tag() != tc.tag || v.Package() != tc.pkg {
			t.Errorf("untagged %d: %s and %s, want %s and %s", tc.commits, v.Tag(), v.Package(), tc.tag, tc.pkg)
		}
	}
}

func TestVersionRefusesOtherTags(t *testing.T) {
	for _, describe := range []string{
		"0.3.0-0-g0123456789ab",        // no v
		"v0.3-0-g0123456789ab",         // no patch
		"v0.03.0-0-g0123456789ab",      // a leading zero
		"v0.3.0_beta-0-g0123456789ab",  // "_": not in RPM's and DEB's shared grammar
		"v0.3.0-rc_1-0-g0123456789ab",  // the same in the pre-release
		"v0.3.0-rc..1-0-g0123456789ab", // an empty pre-release part
		"v0.3.0-0-g0123456",            // not --abbrev=12
		"v0.3.0",                       // not --long
	} {
		if v, err := parseDescribe(describe, false); err == nil {
			t.Errorf("%s: %s, want an error", describe, v.Tag())
		}
	}
}

// TestVersionsOrderInRPMAndDpkg holds the package versions to the real rpm's and
// dpkg's grammars and orders: each is valid, and each sorts after the one before it
// in both, as the commits they name were made.
func TestVersionsOrderInRPMAndDpkg(t *testing.T) {
	versions := []string{
		untagged(3, "0123456789ab", false).Package(),
		untagged(12, "0123456789ab", false).Package(),
		mustDescribe(t, "v0.1.0-rc.1-0-g0123456789ab").Package(),
		mustDescribe(t, "v0.1.0-rc.2-0-g0123456789ab").Package(),
		mustDescribe(t, "v0.1.0-rc.2-3-g0123456789ab").Package(),
		mustDescribe(t, "v0.1.0-0-g0123456789ab").Package(),
		mustDescribe(t, "v0.1.0-2-g0123456789ab").Package(),
		mustDescribe(t, "v0.1.0-10-g0123456789ab").Package(),
		mustDescribe(t, "v0.1.1-0-g0123456789ab").Package(),
		mustDescribe(t, "v0.10.0-0-g0123456789ab").Package(),
	}
	requireTool(t, "dpkg")
	requireTool(t, "rpm")
	for i, v := range versions {
		// dpkg checks the grammar of a version it compares, with the revision RPM's
		// Release and the packages' "-1" add.
		if out, err := exec.Command("dpkg", "--validate-version", v+"-1").CombinedOutput(); err != nil {
			t.Errorf("dpkg --validate-version %s-1: %v: %s", v, err, out)
		}
		if strings.ContainsAny(v, "-/") {
			t.Errorf("%s: RPM's Version may not hold - or /", v)
		}
		if i == 0 {
			continue
		}
		prev := versions[i-1]
		if out, err := exec.Command("dpkg", "--compare-versions", v+"-1", "gt", prev+"-1").CombinedOutput(); err != nil {
			t.Errorf("dpkg: %s is not after %s: %v %s", v, prev, err, out)
		}
		out, err := exec.Command("rpm", "--eval", `%{lua: print(rpm.vercmp("`+v+`", "`+prev+`"))}`).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "1" {
			t.Errorf("rpm: vercmp(%s, %s) = %q (%v), want 1", v, prev, out, err)
		}
	}
}

func mustDescribe(t *testing.T, describe string) version {
	t.Helper()
	v, err := parseDescribe(describe, false)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestGitVersion runs gitVersion on a real repository through its history: no tag,
// a release tag, commits after it, uncommitted changes, a tag that is not a
// release's.
func TestGitVersion(t *testing.T) {
	requireTool(t, "git")
	repo := t.TempDir()
	gitT := func(args ...string) string {
		t.Helper()
		out, err := git(repo, append([]string{"-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	commit := func() string {
		t.Helper()
		gitT("commit", "-q", "--allow-empty", "-m", "c")
		return gitT("rev-parse", "HEAD")[:12]
	}
	want := func(wantTag string) {
		t.Helper()
		v, err := gitVersion(repo)
		if err != nil {
			t.Fatal(err)
		}
		if v.Tag() != wantTag {
			t.Errorf("%s, want %s", v.Tag(), wantTag)
		}
	}
	gitT("init", "-q")
	commit()
	h := commit()
	want("v0.0.0+2.g" + h)
	gitT("tag", "v0.1.0")
	want("v0.1.0")
	gitT("tag", "-a", "-m", "rc", "v0.2.0-rc.1")
	want("v0.2.0-rc.1")
	h = commit()
	want("v0.2.0-rc.1+1.g" + h)
	if err := os.WriteFile(repo+"/f", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	want("v0.2.0-rc.1+1.g" + h + ".dirty")
	gitT("add", "f")
	commit()
	gitT("tag", "v1.0")
	if v, err := gitVersion(repo); err == nil {
		t.Errorf("tag v1.0: %s, want an error naming the tag", v.Tag())
	} else if !strings.Contains(err.Error(), `tag "v1.0" is not a release tag`) {
		t.Errorf("tag v1.0: %v", err)
	}
}
