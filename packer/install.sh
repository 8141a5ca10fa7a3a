#!/bin/sh
# install.sh: everything the node image needs for eksboot, done against any root.
#
# The Packer template runs this one script both on the build instance (DESTDIR=/) and
# into a staging folder (DESTDIR=/some/dir), so CI exercises the same provisioning
# path without AWS. It:
#
#   1. installs the static binary as /usr/bin/eksboot (0755), and eksboot-render, the
#      program `eksboot render` runs (render's simulator, kept out of the binary every
#      boot starts), beside it as /usr/bin/eksboot-render (0755);
#   2. installs the shim assets/bootstrap.sh as /etc/eks/bootstrap.sh (0755): a short
#      script that runs `eksboot bootstrap` with its arguments, written so that user
#      data can still edit it as eksctl does. An original script is kept as
#      /etc/eks/bootstrap.sh.orig (once: a later run never overwrites that copy);
#      eksboot's own earlier symlink is simply replaced;
#   3. writes /etc/eks/kubelet-version.txt from the image's `kubelet --version`, or
#      from KUBELET_VERSION when the root has no kubelet (a staging root);
#   4. installs the units (kubelet.service) into /etc/systemd/system and enables them
#      by creating the links their [Install] section asks for, as `systemctl enable`
#      does;
#   5. on an Amazon Linux 2023 root (its os-release, or nodeadm's units), disables
#      nodeadm-config.service and nodeadm-run.service by removing their links, as
#      `systemctl disable` does, so that eksboot is the only bootstrapper (the units
#      stay on the image);
#   6. installs the manual page eksboot(8) and the bash, zsh and fish completion
#      scripts of DOCS_DIR, when it is given.
#
# Every step prints what it did. A file is replaced (atomically, by rename) only when
# its content differs, so running the script twice leaves the same tree.
#
# Environment:
#   DESTDIR          the root to install into; "/" for the image itself (required,
#                    so that a forgotten variable never installs into the build host)
#   EKSBOOT_BINARY   the static eksboot binary (required)
#   EKSBOOT_RENDER_BINARY  the static eksboot-render binary (default: eksboot-render
#                    beside EKSBOOT_BINARY, where make build puts it)
#   UNITS_DIR        the folder holding the units, i.e. assets/ (required)
#   BOOTSTRAP_SH     the bootstrap.sh shim (default: $UNITS_DIR/bootstrap.sh)
#   KUBELET_VERSION  the kubelet version (e.g. v1.32.9-eks-113cf36), used only when the
#                    root has no kubelet to ask
#   UNITS            the units to install (default: kubelet.service and eksboot's boot
#                    units eksboot-config.service, eksboot-run.service)
#   ENABLE           the units to enable (default: every unit of UNITS but
#                    kubelet.service). kubelet.service stays disabled in the image, as
#                    in the EKS AMI: the bootstrap enables and starts it once it is configured.
#   DOCS_DIR         the folder `make man` writes (bin/docs): eksboot.8 and the completion
#                    scripts completion/eksboot.bash, _eksboot and eksboot.fish, installed
#                    as /usr/share/man/man8/eksboot.8 and where bash-completion, zsh and fish
#                    look for them (optional: without it, none is installed)
set -eu
umask 022

prog=install.sh

say() { printf '%s: %s\n' "$prog" "$*"; }
die() { printf '%s: error: %s\n' "$prog" "$*" >&2; exit 1; }

[ -n "${DESTDIR:-}" ] || die "DESTDIR is not set (use DESTDIR=/ to install into this machine)"
[ -n "${EKSBOOT_BINARY:-}" ] || die "EKSBOOT_BINARY is not set (the static eksboot binary, make build gives bin/eksboot)"
[ -f "$EKSBOOT_BINARY" ] || die "EKSBOOT_BINARY $EKSBOOT_BINARY: no such file"
render_binary=${EKSBOOT_RENDER_BINARY:-$(dirname "$EKSBOOT_BINARY")/eksboot-render}
[ -f "$render_binary" ] || die "EKSBOOT_RENDER_BINARY $render_binary: no such file (make build builds bin/eksboot-render beside bin/eksboot)"
[ -n "${UNITS_DIR:-}" ] || die "UNITS_DIR is not set (the folder with kubelet.service, assets/ in the repository)"
[ -d "$UNITS_DIR" ] || die "UNITS_DIR $UNITS_DIR: no such folder"
[ -d "$DESTDIR" ] || die "DESTDIR $DESTDIR: no such folder"
shim=${BOOTSTRAP_SH:-$UNITS_DIR/bootstrap.sh}
[ -f "$shim" ] || die "bootstrap.sh shim $shim: no such file (assets/bootstrap.sh of the repository; set BOOTSTRAP_SH or UNITS_DIR)"
# The line that makes a bootstrap.sh eksboot's shim (this one or an earlier one).
# shellcheck disable=SC2016 # the text of the line, not an expansion
shim_line='exec /usr/bin/eksboot bootstrap "$@"'
grep -qxF "$shim_line" "$shim" || die "bootstrap.sh shim $shim: no line '$shim_line'"
# The manual page and the completion scripts: DOCS_DIR file, then where it goes.
docs="eksboot.8 /usr/share/man/man8/eksboot.8
completion/eksboot.bash /usr/share/bash-completion/completions/eksboot
completion/_eksboot /usr/share/zsh/site-functions/_eksboot
completion/eksboot.fish /usr/share/fish/vendor_completions.d/eksboot.fish"
if [ -n "${DOCS_DIR:-}" ]; then
	printf '%s\n' "$docs" | while read -r src _; do
		[ -f "$DOCS_DIR/$src" ] || die "DOCS_DIR $DOCS_DIR: no $src (make man writes bin/docs)"
	done
fi
units=${UNITS:-kubelet.service eksboot-config.service eksboot-run.service}
if [ "${ENABLE+set}" = set ]; then
	enable=$ENABLE
else
	enable=
	for unit in $units; do
		[ "$unit" = kubelet.service ] || enable="$enable $unit"
	done
fi
for unit in $enable; do
	case " $units " in
	*" $unit "*) ;;
	*) die "ENABLE names $unit, which UNITS does not install" ;;
	esac
done

# root is DESTDIR without its trailing slash, so "$root/etc" is /etc when DESTDIR=/.
root=${DESTDIR%/}
while [ "${root%/}" != "$root" ]; do root=${root%/}; done

# install_section UNIT prints "KEY VALUE" for each word of each KEY= line of the
# unit's [Install] section.
install_section() {
	awk '
		/^[ \t]*\[/ { section = $0; next }
		section ~ /^[ \t]*\[Install\][ \t]*$/ && /^[ \t]*[A-Za-z]+[ \t]*=/ {
			key = $0; sub(/[ \t]*=.*/, "", key); sub(/^[ \t]*/, "", key)
			value = $0; sub(/^[^=]*=/, "", value)
			n = split(value, words, /[ \t]+/)
			for (i = 1; i <= n; i++) if (words[i] != "") print key, words[i]
		}' "$1"
}

# Everything is checked before the first write, so a failure leaves the root as it was.
# The kubelet version goes to kubelet-version.txt in the EKS AMI's form
# ("Kubernetes v1.32.9-eks-113cf36"), so eksboot need not run the kubelet at boot.
kubelet=
if [ -z "$root" ]; then
	kubelet=$(command -v kubelet || true)
elif [ -x "$root/usr/bin/kubelet" ]; then
	kubelet=$root/usr/bin/kubelet
fi
if [ -n "$kubelet" ]; then
	version=$("$kubelet" --version) || die "$kubelet --version failed"
	from="$kubelet --version"
elif [ -n "${KUBELET_VERSION:-}" ]; then
	version="Kubernetes v${KUBELET_VERSION#v}"
	from="KUBELET_VERSION"
else
	die "no kubelet in the root and KUBELET_VERSION is not set: cannot write /etc/eks/kubelet-version.txt"
fi
printf '%s\n' "$version" | grep -Eq '[0-9]+\.[0-9]+\.[0-9]+' ||
	die "kubelet version \"$version\" (from $from) has no x.y.z version"
# The image: Amazon Linux 2023 (the EKS image configures nodes with nodeadm), Amazon
# Linux 2, or another distribution (generic: the same steps but nodeadm's). os-release
# may be a link (to ../usr/lib/os-release); an absolute one is read under the root.
osrelease=
for f in /etc/os-release /usr/lib/os-release; do
	p=$root$f
	if [ -L "$p" ]; then
		target=$(readlink "$p")
		case $target in /*) p=$root$target ;; esac
	fi
	if [ -f "$p" ]; then
		osrelease=$p
		break
	fi
done
# os_value KEY prints KEY's value in os-release, without its quotes.
os_value() {
	[ -n "$osrelease" ] || return 0
	sed -n "s/^$1=//p" "$osrelease" | tail -n 1 | sed -e 's/^"\(.*\)"$/\1/' -e "s/^'\\(.*\\)'\$/\\1/"
}
os_id=$(os_value ID)
os_version=$(os_value VERSION_ID)
nodeadm_units="nodeadm-config.service nodeadm-run.service"
has_nodeadm=
for unit in $nodeadm_units; do
	for dir in /etc/systemd/system /usr/lib/systemd/system; do
		if [ -e "$root$dir/$unit" ]; then has_nodeadm="$dir/$unit"; fi
	done
done
if [ "$os_id" = amzn ] && [ "$os_version" = 2023 ]; then
	image=al2023
	image_from="ID=$os_id VERSION_ID=$os_version in ${osrelease#"$root"}"
elif [ -n "$has_nodeadm" ]; then
	image=al2023
	image_from="$has_nodeadm"
elif [ "$os_id" = amzn ] && [ "$os_version" = 2 ]; then
	image=al2
	image_from="ID=$os_id VERSION_ID=$os_version in ${osrelease#"$root"}"
else
	image=generic
	image_from=${osrelease:+"ID=$os_id VERSION_ID=$os_version in ${osrelease#"$root"}"}
	image_from=${image_from:-"no os-release"}
fi
# nodeadm's enablement links to remove: only links in /etc/systemd/system, which is
# all `systemctl disable` removes. A link shipped under /usr/lib cannot be undone that
# way, and a regular file where a link should be is not something to delete blindly.
nodeadm_links=
if [ "$image" = al2023 ]; then
	for unit in $nodeadm_units; do
		for link in "$root"/etc/systemd/system/*.wants/"$unit" "$root"/etc/systemd/system/*.requires/"$unit"; do
			if [ -L "$link" ]; then
				nodeadm_links="$nodeadm_links ${link#"$root"}"
			elif [ -e "$link" ]; then
				die "${link#"$root"}: not a symlink; cannot disable $unit the way systemctl disable does"
			fi
		done
		for link in "$root"/usr/lib/systemd/system/*.wants/"$unit" "$root"/usr/lib/systemd/system/*.requires/"$unit"; do
			if [ -e "$link" ] || [ -L "$link" ]; then
				die "${link#"$root"}: $unit is enabled by the distribution's own link, which systemctl disable cannot remove (mask it in the image instead)"
			fi
		done
	done
fi

for unit in $units; do
	[ -f "$UNITS_DIR/$unit" ] || die "unit $UNITS_DIR/$unit: no such file"
	install_section "$UNITS_DIR/$unit" | while read -r key _; do
		case $key in
		WantedBy | RequiredBy) ;;
		*) die "$unit: [Install] $key= is not supported (only WantedBy= and RequiredBy=)" ;;
		esac
	done
done

# install_file SRC PATH MODE installs SRC as $root/PATH with MODE, replacing the
# file by rename only when its content differs.
install_file() {
	src=$1 dst=$root$2 mode=$3
	mkdir -p "$(dirname "$dst")"
	if [ -f "$dst" ] && [ ! -L "$dst" ] && cmp -s "$src" "$dst"; then
		chmod "$mode" "$dst"
		say "$2: unchanged"
		return
	fi
	verb=installed
	if [ -e "$dst" ] || [ -L "$dst" ]; then verb=updated; fi
	tmp=$dst.install-tmp
	cp "$src" "$tmp"
	chmod "$mode" "$tmp"
	mv -f "$tmp" "$dst"
	say "$2: $verb (mode $mode)"
}

# install_link TARGET PATH makes $root/PATH a symlink to TARGET, replacing whatever
# is there (callers keep what must be kept first).
install_link() {
	target=$1 dst=$root$2
	mkdir -p "$(dirname "$dst")"
	if [ -L "$dst" ] && [ "$(readlink "$dst")" = "$target" ]; then
		say "$2: unchanged (-> $target)"
		return
	fi
	tmp=$dst.install-tmp
	rm -f "$tmp"
	ln -s "$target" "$tmp"
	mv -f "$tmp" "$dst"
	say "$2: linked to $target"
}

say "image: $image ($image_from)"

# 1. The binaries: eksboot, and eksboot-render beside it, where `eksboot render` finds it.
install_file "$EKSBOOT_BINARY" /usr/bin/eksboot 0755
install_file "$render_binary" /usr/bin/eksboot-render 0755

# 2. bootstrap.sh: the shim, a script (not a link to eksboot) so that user data may
# edit it, as eksctl's maxPodsPerNode does. What is there is kept as bootstrap.sh.orig
# unless it is eksboot's: the shim of an earlier image, or the symlink to the binary
# that install.sh made before the shim.
bs=/etc/eks/bootstrap.sh
if [ -f "$root$bs" ] && [ ! -L "$root$bs" ] && grep -qxF "$shim_line" "$root$bs"; then
	: # eksboot's shim: install_file replaces it if it differs
elif [ -L "$root$bs" ] && { [ "$(readlink "$root$bs")" = ../../usr/bin/eksboot ] || [ "$(readlink "$root$bs")" = /usr/bin/eksboot ]; }; then
	say "$bs: replacing eksboot's symlink ($(readlink "$root$bs")) with the shim"
elif [ -e "$root$bs" ] || [ -L "$root$bs" ]; then
	if [ -e "$root$bs.orig" ] || [ -L "$root$bs.orig" ]; then
		say "$bs: replacing it; the first original stays in $bs.orig"
	else
		mv "$root$bs" "$root$bs.orig"
		say "$bs: kept the original as $bs.orig"
	fi
fi
install_file "$shim" "$bs" 0755

# 3. kubelet-version.txt.
tmpdir=$(mktemp -d)
trap 'rm -rf "$tmpdir"' EXIT
printf '%s\n' "$version" >"$tmpdir/kubelet-version.txt"
install_file "$tmpdir/kubelet-version.txt" /etc/eks/kubelet-version.txt 0644
say "kubelet version: $version (from $from)"

# 4. The units; those in ENABLE enabled the way `systemctl enable` does it: a link to the unit in
# <target>.wants/ (WantedBy=) or <target>.requires/ (RequiredBy=). systemctl is not
# used because it may be missing on the build host of a staging root; the result is
# the same links (the tests check this against `systemctl --root`).
for unit in $units; do
	src=$UNITS_DIR/$unit
	install_file "$src" "/etc/systemd/system/$unit" 0644
	case " $enable " in
	*" $unit "*) ;;
	*)
		say "$unit: not enabled in the image (eksboot enables it at boot)"
		continue
		;;
	esac
	install=$(install_section "$src")
	if [ -z "$install" ]; then
		say "$unit: no [Install] section, nothing to enable"
		continue
	fi
	printf '%s\n' "$install" | while read -r key target; do
		case $key in
		WantedBy) dir=wants ;;
		*) dir=requires ;;
		esac
		install_link "/etc/systemd/system/$unit" "/etc/systemd/system/$target.$dir/$unit"
	done
done

# 5. On AL2023, eksboot is the only bootstrapper: nodeadm's units stay on the image
# but are disabled, as `systemctl disable` does it (their links removed); eksboot's
# boot units, enabled above, take their place.
if [ "$image" = al2023 ]; then
	for unit in $nodeadm_units; do
		case " $nodeadm_links " in
		*"/$unit "*) ;;
		*)
			say "$unit: not enabled (unchanged)"
			continue
			;;
		esac
		for link in $nodeadm_links; do
			case $link in
			*/"$unit")
				rm -f "$root$link"
				say "$unit: disabled (removed $link; eksboot's boot units take its place)"
				;;
			esac
		done
	done
fi

# 6. The manual page eksboot(8) and the shells' completion scripts.
if [ -n "${DOCS_DIR:-}" ]; then
	printf '%s\n' "$docs" | while read -r src dst; do
		install_file "$DOCS_DIR/$src" "$dst" 0644
	done
else
	say "DOCS_DIR is not set: no manual page or completion scripts (make man writes them into bin/docs)"
fi

# 7. The folder for NodeConfig drop-ins that eksboot init merges after the user data.
if [ ! -d "$root/etc/eks/eksboot.d" ]; then
	mkdir -p "$root/etc/eks/eksboot.d"
	say "/etc/eks/eksboot.d: created (NodeConfig drop-ins, merged after the user data)"
fi

# 8. No node state in the image: eksboot's cache of the cluster's endpoint and CA
# (/var/lib/eksboot) belongs to one node; an image that carried it would make every
# node launched from it start from a stale answer.
if [ -e "$root/var/lib/eksboot" ]; then
	rm -rf "$root/var/lib/eksboot"
	say "/var/lib/eksboot: removed (node state must not be baked into the image)"
fi
say "done (DESTDIR=$DESTDIR)"
