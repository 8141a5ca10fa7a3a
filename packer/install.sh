#!/bin/sh
# install.sh: everything the node image needs for eksboot, done against any root,
# without a package manager: the installer of make package's tarball, whose folder
# holds its inputs (eksboot, eksboot-render, units/, docs/). The RPM and the DEB do
# the same with their files and scripts (image-lib.sh's functions, which this script
# sources); the tests install both beside this script and compare the trees. It:
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
#      does; the image's own kubelet.service is kept as kubelet.service.orig, as
#      bootstrap.sh is;
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
# The functions every install of eksboot shares with the packages' scripts.
# shellcheck source=image-lib.sh
. "$(dirname "$0")/image-lib.sh"

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
grep -qxF "$shim_line" "$shim" || die "bootstrap.sh shim $shim: no line '$shim_line'"
case " ${UNITS:-$eksboot_units} " in
*" kubelet.service "*)
	[ ! -f "$UNITS_DIR/kubelet.service" ] || [ "$(head -n 1 "$UNITS_DIR/kubelet.service")" = "$kubelet_unit_line" ] ||
		die "$UNITS_DIR/kubelet.service: its first line is not '$kubelet_unit_line', which tells eksboot's unit from the image's"
	;;
esac
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
units=${UNITS:-$eksboot_units}
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

# Everything is checked before the first write, so a failure leaves the root as it was.
kubelet_version
[ -n "$kubelet_version" ] ||
	die "no kubelet in the root and KUBELET_VERSION is not set: cannot write /etc/eks/kubelet-version.txt"
detect_image
find_nodeadm_links
for unit in $units; do
	[ -f "$UNITS_DIR/$unit" ] || die "unit $UNITS_DIR/$unit: no such file"
	check_install_keys "$UNITS_DIR/$unit" "$unit"
done

say "image: $image ($image_from)"

# 1. The binaries: eksboot, and eksboot-render beside it, where `eksboot render` finds it.
install_file "$EKSBOOT_BINARY" /usr/bin/eksboot 0755
install_file "$render_binary" /usr/bin/eksboot-render 0755

# 2. bootstrap.sh: the shim, a script (not a link to eksboot) so that user data may
# edit it, as eksctl's maxPodsPerNode does. What is there is kept as bootstrap.sh.orig
# unless it is eksboot's.
keep_original /etc/eks/bootstrap.sh
install_file "$shim" /etc/eks/bootstrap.sh 0755

# 3. kubelet-version.txt.
write_kubelet_version

# 4. The units; those in ENABLE enabled the way `systemctl enable` does it. The
# image's own kubelet.service (AL2023's runs nodeadm's flags) is kept as
# kubelet.service.orig.
for unit in $units; do
	if [ "$unit" = kubelet.service ]; then keep_original /etc/systemd/system/kubelet.service; fi
	install_file "$UNITS_DIR/$unit" "/etc/systemd/system/$unit" 0644
	case " $enable " in
	*" $unit "*) enable_unit "/etc/systemd/system/$unit" ;;
	*) say "$unit: not enabled in the image (eksboot enables it at boot)" ;;
	esac
done

# 5. On AL2023, eksboot is the only bootstrapper: nodeadm's units are disabled.
disable_nodeadm

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

# 8. No node state in the image.
forget_node_state
say "done (DESTDIR=$DESTDIR)"
