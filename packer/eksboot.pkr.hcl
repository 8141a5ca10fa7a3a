# Bakes eksboot into an EKS node image by installing its RPM (make package), the one
# path to an image. Two sources:
#
#   amazon-ebs.eks-node  launches the source EKS AMI, uploads the RPM, installs it with
#                        rpm -U (its scripts keep the image's bootstrap.sh, enable
#                        eksboot's units and disable nodeadm's) and registers a new AMI
#                        (make ami; needs AWS credentials);
#   null.staging         lays out a stand-in of the source image (fake-image.sh) in
#                        var.staging_dir and installs the same RPM into it with
#                        rpm --root on this machine, so the provisioning path is tested
#                        without AWS (make test).
#
# Written for Packer 1.6.6 (Debian's packer) and newer: no packer.required_plugins
# and no data sources, which 1.6.6 does not know. Packer 1.10 and later ship no
# plugins: plugins/plugins.pkr.hcl names the Amazon plugin for `packer init`, in a
# folder of its own so that 1.6.6 never reads it. See README.md.

packer {
  required_version = ">= 1.6.6"
}

locals {
  # The EKS-optimized AMIs' names: AL2023 names the architecture in every name, AL2
  # only for arm64.
  source_ami_name = var.source_ami_name != "" ? var.source_ami_name : (
    var.image_family == "al2023"
    ? "amazon-eks-node-al2023-${var.architecture}-standard-${var.kubernetes_version}-v*"
    : (
      var.architecture == "arm64"
      ? "amazon-eks-arm64-node-${var.kubernetes_version}-v*"
      : "amazon-eks-node-${var.kubernetes_version}-v*"
    )
  )
  ami_name = var.ami_name != "" ? var.ami_name : "eksboot-eks-node-${var.image_family}-${var.kubernetes_version}-${var.architecture}-${formatdate("YYYYMMDDhhmmss", timestamp())}"
  # What make package writes. Unset, the path Packer reports names the fix.
  eksboot_rpm   = var.eksboot_rpm != "" ? var.eksboot_rpm : "eksboot_rpm is not set: run make package first and give -var eksboot_rpm=../dist/eksboot-VERSION-1.ARCH.rpm (make ami does both)"
  fake_image_sh = "${path.root}/fake-image.sh"
  # The kubelet version of the local source's stand-in image.
  staging_kubelet_version = var.kubelet_version != "" ? var.kubelet_version : "v${var.kubernetes_version}.0"
  # Where the amazon-ebs build uploads the RPM.
  upload_dir = "/tmp/eksboot-install"
}

source "amazon-ebs" "eks-node" {
  region        = var.region
  instance_type = var.instance_type
  ssh_username  = var.ssh_username
  ami_name      = local.ami_name

  source_ami_filter {
    filters = {
      name                  = local.source_ami_name
      architecture          = var.architecture
      "root-device-type"    = "ebs"
      "virtualization-type" = "hvm"
    }
    owners      = var.source_ami_owners
    most_recent = true
  }

  tags = {
    Name               = local.ami_name
    eksboot_version    = var.eksboot_version
    kubernetes_version = var.kubernetes_version
    image_family       = var.image_family
    source_ami_name    = "{{ .SourceAMIName }}"
  }
}

# Packer's null builder runs no machine: its provisioners are local (shell-local).
source "null" "staging" {
  communicator = "none"
}

build {
  sources = ["source.amazon-ebs.eks-node", "source.null.staging"]

  # On the build instance: upload the RPM and install it as root.
  provisioner "shell" {
    only   = ["amazon-ebs.eks-node"]
    inline = ["mkdir -p ${local.upload_dir}"]
  }

  provisioner "file" {
    only        = ["amazon-ebs.eks-node"]
    source      = local.eksboot_rpm
    destination = "${local.upload_dir}/eksboot.rpm"
  }

  provisioner "shell" {
    only   = ["amazon-ebs.eks-node"]
    inline = ["sudo rpm -Uvh ${local.upload_dir}/eksboot.rpm"]
  }

  # A smoke test of the result: the binaries run and eksboot answers as bootstrap.sh,
  # eksboot's boot units are enabled and nodeadm's are not (on AL2 there are none).
  provisioner "shell" {
    only = ["amazon-ebs.eks-node"]
    inline = [
      "rpm -q eksboot",
      "eksboot version",
      "eksboot-render --help >/dev/null",
      "test -s /usr/share/man/man8/eksboot.8 && test -s /usr/share/bash-completion/completions/eksboot",
      "/etc/eks/bootstrap.sh --help >/dev/null",
      "cat /etc/eks/kubelet-version.txt",
      "systemctl is-enabled eksboot-config.service",
      "systemctl is-enabled eksboot-run.service",
      # Not `! systemctl ...`: sh -e ignores the status of a command negated with !.
      "for u in nodeadm-config.service nodeadm-run.service; do if systemctl is-enabled --quiet $u 2>/dev/null; then echo \"$u is still enabled\" >&2; exit 1; fi; done",
      "rm -rf ${local.upload_dir}",
    ]
  }

  # On this machine: a stand-in of the source image in the staging folder, then the
  # same RPM into it. rpm runs the package's scripts chrooted in the folder (hence
  # root, and the stand-in's static busybox as its shell); the database goes where
  # AL2023's and AL2's rpm keep it.
  provisioner "shell-local" {
    only   = ["null.staging"]
    script = local.fake_image_sh
    environment_vars = [
      "DESTDIR=${var.staging_dir}",
      "IMAGE_FAMILY=${var.image_family}",
      "KUBELET_VERSION=${local.staging_kubelet_version}",
    ]
    execute_command = ["/bin/sh", "-c", "{{ .Vars }} /bin/sh {{ .Script }}"]
  }

  provisioner "shell-local" {
    only = ["null.staging"]
    inline = [
      "[ -n \"$DESTDIR\" ] && [ \"$DESTDIR\" != / ] || { echo 'staging_dir is not set' >&2; exit 1; }",
      # rpm only warns when a package's script fails: that fails the build here.
      "out=$(rpm --root \"$DESTDIR\" --dbpath /var/lib/rpm -Uvh \"$EKSBOOT_RPM\" 2>&1) || { printf '%s\\n' \"$out\"; exit 1; }",
      "printf '%s\\n' \"$out\"",
      "case $out in *'scriptlet failed'*) exit 1 ;; esac",
    ]
    environment_vars = [
      "DESTDIR=${var.staging_dir}",
      "EKSBOOT_RPM=${local.eksboot_rpm}",
    ]
    execute_command = ["/bin/sh", "-c", "{{ .Vars }} /bin/sh -e {{ .Script }}"]
  }
}
