#!/bin/sh
# fake-image.sh: lays out, in an empty staging folder, what an EKS node image holds
# that a bootstrapper reads, so that the template's local source (null.staging) runs
# install.sh on a root shaped like the source AMI of the real build. README.md lists
# the layout of each family and where each file comes from on the real image.
#
# The executables are stand-ins: the kubelet and containerd answer --version as the
# image's do (install.sh and eksboot read that), the rest exit 1. The image's shell
# and tools are a static busybox, /bin/busybox with its applets linked in /bin: the
# RPM's scripts run in them, chrooted in the root (rpm --root).
#
# Environment:
#   DESTDIR          the staging folder (required; it must exist and be empty, and it
#                    may not be /: this script never writes into a real system)
#   IMAGE_FAMILY     al2023 (default) or al2
#   KUBELET_VERSION  the kubelet version the stand-in kubelet reports (required),
#                    e.g. v1.35.0-eks-4a1b2c3
#   BUSYBOX          a static busybox (default: busybox on PATH; Debian's
#                    busybox-static)
set -eu
umask 022

prog=fake-image.sh

say() { printf '%s: %s\n' "$prog" "$*"; }
die() { printf '%s: error: %s\n' "$prog" "$*" >&2; exit 1; }

[ -n "${DESTDIR:-}" ] || die "DESTDIR is not set (the empty staging folder to lay the image out in)"
[ -d "$DESTDIR" ] || die "DESTDIR $DESTDIR: no such folder"
root=$(cd "$DESTDIR" && pwd -P)
[ "$root" != / ] || die "DESTDIR is /: the stand-in image is laid out only in a staging folder"
[ -z "$(ls -A "$root")" ] || die "DESTDIR $DESTDIR is not empty (the stand-in image is laid out once, before install.sh)"
family=${IMAGE_FAMILY:-al2023}
case $family in
al2023 | al2) ;;
*) die "IMAGE_FAMILY $family: want al2023 or al2" ;;
esac
[ -n "${KUBELET_VERSION:-}" ] || die "KUBELET_VERSION is not set (the version the stand-in kubelet reports)"
kubelet_line="Kubernetes v${KUBELET_VERSION#v}"
busybox=${BUSYBOX:-$(command -v busybox || true)}
[ -f "${busybox:-/nonexistent}" ] ||
	die "no busybox (apt-get install busybox-static, or set BUSYBOX): the stand-in's shell, in which the RPM's scripts run"

# put PATH MODE writes stdin to $root/PATH with MODE.
put() {
	mkdir -p "$(dirname "$root$1")"
	cat >"$root$1"
	chmod "$2" "$root$1"
}

# stand_in PATH [VERSION_LINE] writes an executable that prints VERSION_LINE for
# --version and otherwise exits 1.
stand_in() {
	if [ $# -gt 1 ]; then
		put "$1" 0755 <<-EOF
			#!/bin/sh
			# Stand-in for the image's $1 (packer/fake-image.sh).
			case \${1:-} in
			--version) echo '$2' ;;
			*) exit 1 ;;
			esac
		EOF
	else
		put "$1" 0755 <<-EOF
			#!/bin/sh
			# Stand-in for the image's $1 (packer/fake-image.sh).
			exit 1
		EOF
	fi
}

al2023() {
	put /etc/os-release 0644 <<-'EOF'
		NAME="Amazon Linux"
		VERSION="2023"
		ID="amzn"
		ID_LIKE="fedora"
		VERSION_ID="2023"
		PLATFORM_ID="platform:al2023"
		PRETTY_NAME="Amazon Linux 2023.9.20251117"
		ANSI_COLOR="0;33"
		CPE_NAME="cpe:2.3:o:amazon:amazon_linux:2023"
		HOME_URL="https://aws.amazon.com/linux/amazon-linux-2023/"
		SUPPORT_END="2029-06-30"
	EOF
	containerd_line='containerd github.com/containerd/containerd/v2 2.1.5 fb4c30d4ede3531652d86197bf3fc9515e5276d9'
	printf '%s\n' "$kubelet_line" | put /etc/eks/kubelet-version.txt 0644
	printf '%s\n' "$containerd_line" | put /etc/eks/containerd-version.txt 0644
	put /etc/eks/release 0644 <<-'EOF'
		BASE_AMI_ID="ami-0123456789abcdef0"
		BUILD_TIME="Thu Nov 20 00:00:00 UTC 2025"
		ARCH="x86_64"
	EOF
	: | put /etc/eks/pause.tar 0644
	stand_in /etc/eks/image-credential-provider/ecr-credential-provider
	stand_in /usr/bin/kubelet "$kubelet_line"
	stand_in /usr/bin/containerd "$containerd_line"
	stand_in /usr/bin/nodeadm
	stand_in /usr/bin/aws
	stand_in /usr/sbin/runc

	put /etc/eks/bootstrap.sh 0755 <<-'EOF'
		#!/usr/bin/env bash
		# Stand-in for the AL2023 EKS image's /etc/eks/bootstrap.sh (packer/fake-image.sh):
		# a banner and exit status 1, as that image has no bootstrap.sh any more.
		echo >&2 'bootstrap.sh is not part of AL2023-based EKS images: nodes are initialized by nodeadm.'
		exit 1
	EOF

	put /etc/systemd/system/kubelet.service 0644 <<-'EOF'
		[Unit]
		Description=Kubernetes Kubelet
		Documentation=https://github.com/kubernetes/kubernetes
		After=containerd.service
		Wants=containerd.service

		[Service]
		Slice=runtime.slice
		EnvironmentFile=/etc/eks/kubelet/environment
		ExecStartPre=/sbin/iptables -P FORWARD ACCEPT -w 5
		ExecStart=/usr/bin/kubelet $NODEADM_KUBELET_ARGS
		Restart=on-failure
		RestartForceExitStatus=SIGPIPE
		RestartSec=5
		KillMode=process
		CPUAccounting=true
		MemoryAccounting=true

		[Install]
		WantedBy=multi-user.target
	EOF
	put /etc/systemd/system/containerd.service.d/00-runtime-slice.conf 0644 <<-'EOF'
		# containerd in runtime.slice, where the kubelet's --runtime-cgroups looks for it.
		[Service]
		Slice=runtime.slice
	EOF
	put /etc/systemd/system/nodeadm-config.service 0644 <<-'EOF'
		[Unit]
		Description=EKS Nodeadm Config
		Before=cloud-init.service
		After=systemd-networkd-wait-online.service

		[Service]
		Type=oneshot
		ExecStart=/usr/bin/nodeadm init --skip run

		[Install]
		WantedBy=multi-user.target
	EOF
	put /etc/systemd/system/nodeadm-run.service 0644 <<-'EOF'
		[Unit]
		Description=EKS Nodeadm Run
		After=nodeadm-config.service cloud-final.service
		Requires=nodeadm-config.service

		[Service]
		Type=oneshot
		ExecStart=/usr/bin/nodeadm init --skip config

		[Install]
		WantedBy=multi-user.target
	EOF
	# Enabled, as the image's build does with systemctl enable.
	mkdir -p "$root/etc/systemd/system/multi-user.target.wants"
	for unit in nodeadm-config.service nodeadm-run.service; do
		ln -s "/etc/systemd/system/$unit" "$root/etc/systemd/system/multi-user.target.wants/$unit"
	done
	for dir in /etc/containerd /etc/eks/nodeadm.d /etc/kubernetes/manifests /var/lib/kubelet /var/lib/kubernetes /opt/cni/bin; do
		mkdir -p "$root$dir"
	done
}

al2() {
	put /etc/os-release 0644 <<-'EOF'
		NAME="Amazon Linux"
		VERSION="2"
		ID="amzn"
		ID_LIKE="centos rhel fedora"
		VERSION_ID="2"
		PRETTY_NAME="Amazon Linux 2"
		ANSI_COLOR="0;33"
		CPE_NAME="cpe:2.3:o:amazon:amazon_linux:2"
		HOME_URL="https://amazonlinux.com/"
		SUPPORT_END="2026-06-30"
	EOF
	put /etc/eks/bootstrap.sh 0755 <<-'EOF'
		#!/usr/bin/env bash
		# Stand-in for the Amazon Linux 2 EKS image's /etc/eks/bootstrap.sh (packer/fake-image.sh).
		echo >&2 'the AL2 image bootstrap.sh stand-in does nothing'
		exit 1
	EOF
	stand_in /usr/bin/kubelet "$kubelet_line"
	stand_in /usr/bin/containerd 'containerd github.com/containerd/containerd 1.7.27 05044ec0a9a75232cad458027ca83437aae3f4da'
	stand_in /usr/bin/aws-iam-authenticator
	stand_in /usr/sbin/runc
}

# shell lays out the image's shell and tools: busybox and a link to it for each of
# its applets, in /bin.
shell() {
	mkdir -p "$root/bin"
	cp "$busybox" "$root/bin/busybox"
	chmod 0755 "$root/bin/busybox"
	for applet in $("$busybox" --list); do
		[ "$applet" = busybox ] || ln -s busybox "$root/bin/$applet"
	done
}

shell
"$family"
say "laid out the $family image's files in $DESTDIR (kubelet $kubelet_line)"
