# shellcheck shell=sh
# shellcheck disable=SC2034,SC2154 # variables set for and by the caller (prog, root, image, ...)
# image-lib.sh: what install.sh and the packages' scripts do to a node image, as
# shell functions (POSIX sh), so that both do it the same way. install.sh sources it
# from beside itself; tools/release puts it at the top of each RPM and DEB script.
# It defines functions and nothing else; the caller sets:
#
#   prog  the name every message starts with
#   root  the image's root without a trailing slash ("" for /)
#
# Every function that changes the root prints one line saying what it did.

say() { printf '%s: %s\n' "$prog" "$*"; }
die() {
	printf '%s: error: %s\n' "$prog" "$*" >&2
	exit 1
}

# The line that makes a bootstrap.sh eksboot's shim (this one or an earlier one).
# shellcheck disable=SC2016 # the text of the line, not an expansion
shim_line='exec /usr/bin/eksboot bootstrap "$@"'
# The first line of eksboot's kubelet.service (assets/kubelet.service), which tells
# it from the image's own unit.
kubelet_unit_line="# kubelet.service as eksboot installs it: the containerd variant of the EKS AMI's unit."
# eksboot's units, and those of them enabled in the image. kubelet.service stays
# disabled, as in the EKS AMI: the bootstrap enables and starts it once it is
# configured.
eksboot_units="kubelet.service eksboot-config.service eksboot-run.service"
eksboot_boot_units="eksboot-config.service eksboot-run.service"
nodeadm_units="nodeadm-config.service nodeadm-run.service"

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

# check_install_keys UNIT_FILE NAME refuses an [Install] section with anything but
# WantedBy= and RequiredBy=, the two that enable_unit makes links for.
check_install_keys() {
	install_section "$1" | while read -r key _; do
		case $key in
		WantedBy | RequiredBy) ;;
		*) die "$2: [Install] $key= is not supported (only WantedBy= and RequiredBy=)" ;;
		esac
	done
}

# detect_image sets image (al2023, al2 or generic) and image_from (why) from the
# root's os-release, or nodeadm's units: Amazon Linux 2023 (the EKS image configures
# nodes with nodeadm), Amazon Linux 2, or another distribution. os-release may be a
# link (to ../usr/lib/os-release); an absolute one is read under the root.
detect_image() {
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
	os_id=$(os_value ID)
	os_version=$(os_value VERSION_ID)
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
}

# os_value KEY prints KEY's value in os-release (detect_image's), without its quotes.
os_value() {
	[ -n "$osrelease" ] || return 0
	sed -n "s/^$1=//p" "$osrelease" | tail -n 1 | sed -e 's/^"\(.*\)"$/\1/' -e "s/^'\\(.*\\)'\$/\\1/"
}

# find_nodeadm_links sets nodeadm_links to nodeadm's enablement links that
# disable_nodeadm removes: only links in /etc/systemd/system, which is all
# `systemctl disable` removes. A link shipped under /usr/lib cannot be undone that
# way, and a regular file where a link should be is not something to delete blindly:
# both stop the caller before its first write. Only on AL2023 (detect_image first).
find_nodeadm_links() {
	nodeadm_links=
	[ "$image" = al2023 ] || return 0
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
}

# disable_nodeadm makes eksboot the only bootstrapper on AL2023: nodeadm's units stay
# on the image but are disabled, as `systemctl disable` does it (the links
# find_nodeadm_links found are removed); eksboot's boot units take their place.
disable_nodeadm() {
	[ "$image" = al2023 ] || return 0
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
}

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

# enable_unit PATH enables the unit file at $root/PATH the way `systemctl enable`
# does it: a link to PATH in <target>.wants/ (WantedBy=) or <target>.requires/
# (RequiredBy=) of /etc/systemd/system. systemctl is not used because it may be
# missing where a staging root is built, and a package's script may run in a root
# without a running systemd; the result is the same links (the tests check this
# against `systemctl --root`).
enable_unit() {
	unit=${1##*/}
	install=$(install_section "$root$1")
	if [ -z "$install" ]; then
		say "$unit: no [Install] section, nothing to enable"
		return
	fi
	printf '%s\n' "$install" | while read -r key target; do
		case $key in
		WantedBy) dir=wants ;;
		*) dir=requires ;;
		esac
		install_link "$1" "/etc/systemd/system/$target.$dir/$unit"
	done
}

# disable_unit UNIT removes the links to UNIT from /etc/systemd/system's .wants/ and
# .requires/ folders, as `systemctl disable` does, and the folders it empties.
disable_unit() {
	for link in "$root"/etc/systemd/system/*.wants/"$1" "$root"/etc/systemd/system/*.requires/"$1"; do
		[ -L "$link" ] || continue
		rm -f "$link"
		if [ -z "$(ls -A "${link%/*}")" ]; then rmdir "${link%/*}"; fi
		say "$1: disabled (removed ${link#"$root"})"
	done
}

# unit_file UNIT prints where the image has UNIT (/etc/systemd/system first, as
# systemd looks), or nothing.
unit_file() {
	for dir in /etc/systemd/system /usr/lib/systemd/system; do
		if [ -f "$root$dir/$1" ]; then
			printf '%s\n' "$dir/$1"
			return
		fi
	done
}

# is_eksboots PATH says whether the file at $root/PATH is eksboot's own (an earlier
# shim or unit, which is replaced, not kept): a bootstrap.sh with the shim's exec
# line, a kubelet.service starting with eksboot's first line.
is_eksboots() {
	[ -f "$root$1" ] && [ ! -L "$root$1" ] || return 1
	case $1 in
	*/bootstrap.sh) grep -qxF "$shim_line" "$root$1" ;;
	*/kubelet.service) [ "$(head -n 1 "$root$1")" = "$kubelet_unit_line" ] ;;
	*) return 1 ;;
	esac
}

# keep_original PATH moves the image's own $root/PATH aside as PATH.orig, once: a
# later call never overwrites that copy. eksboot's own file (is_eksboots) is not
# kept, nor the symlink to the binary that install.sh made of bootstrap.sh before
# the shim: both are simply replaced.
keep_original() {
	p=$root$1
	if is_eksboots "$1"; then
		: # eksboot's: replaced by the caller if it differs
	elif [ -L "$p" ] && { [ "$(readlink "$p")" = ../../usr/bin/eksboot ] || [ "$(readlink "$p")" = /usr/bin/eksboot ]; }; then
		say "$1: replacing eksboot's symlink ($(readlink "$p")) with the shim"
	elif [ -e "$p" ] || [ -L "$p" ]; then
		if [ -e "$p.orig" ] || [ -L "$p.orig" ]; then
			say "$1: replacing it; the first original stays in $1.orig"
		else
			mv "$p" "$p.orig"
			say "$1: kept the original as $1.orig"
		fi
	fi
}

# restore_original PATH puts $root/PATH.orig back as PATH (what keep_original kept),
# replacing whatever is there.
restore_original() {
	p=$root$1
	if [ -e "$p.orig" ] || [ -L "$p.orig" ]; then
		rm -f "$p"
		mv "$p.orig" "$p"
		say "$1: restored the original from $1.orig"
	fi
}

# kubelet_version sets kubelet_version and kubelet_from from the image's kubelet (the
# one on PATH when the root is /, else $root/usr/bin/kubelet), else from
# KUBELET_VERSION; kubelet_version is empty when neither is there. It fails on a
# version without x.y.z.
kubelet_version() {
	kubelet=
	if [ -z "$root" ]; then
		kubelet=$(command -v kubelet || true)
	elif [ -x "$root/usr/bin/kubelet" ]; then
		kubelet=$root/usr/bin/kubelet
	fi
	kubelet_version='' kubelet_from=''
	if [ -n "$kubelet" ]; then
		kubelet_version=$("$kubelet" --version) || die "$kubelet --version failed"
		kubelet_from="$kubelet --version"
	elif [ -n "${KUBELET_VERSION:-}" ]; then
		kubelet_version="Kubernetes v${KUBELET_VERSION#v}"
		kubelet_from="KUBELET_VERSION"
	else
		return 0
	fi
	printf '%s\n' "$kubelet_version" | grep -Eq '[0-9]+\.[0-9]+\.[0-9]+' ||
		die "kubelet version \"$kubelet_version\" (from $kubelet_from) has no x.y.z version"
}

# write_kubelet_version writes /etc/eks/kubelet-version.txt from kubelet_version, in
# the EKS AMI's form ("Kubernetes v1.32.9-eks-113cf36"), so that eksboot need not
# run the kubelet at boot. The new text is staged beside the file: a package's
# script may run in a root with no /tmp.
write_kubelet_version() {
	new=$root/etc/eks/kubelet-version.txt.install-new
	mkdir -p "$root/etc/eks"
	printf '%s\n' "$kubelet_version" >"$new"
	install_file "$new" /etc/eks/kubelet-version.txt 0644
	rm -f "$new"
	say "kubelet version: $kubelet_version (from $kubelet_from)"
}

# forget_node_state removes eksboot's cache of the cluster's endpoint and CA
# (/var/lib/eksboot): it belongs to one node, and an image that carried it would make
# every node launched from it start from a stale answer.
forget_node_state() {
	if [ -e "$root/var/lib/eksboot" ]; then
		rm -rf "$root/var/lib/eksboot"
		say "/var/lib/eksboot: removed (node state must not be baked into the image)"
	fi
}

# reload_systemd has a running systemd read the units again (a package installed on
# a live machine); in a root being built (rpm --root, dpkg --root, an image build
# before its first boot) there is none, and nothing to do.
reload_systemd() {
	if [ -z "$root" ] && [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
		systemctl daemon-reload || say "systemctl daemon-reload failed; run it before starting eksboot's units"
	fi
}
