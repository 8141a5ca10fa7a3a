# Bakes eksboot into an EKS node image. Two sources run the same provisioning script,
# install.sh:
#
#   amazon-ebs.eks-node  launches the source EKS AMI, installs eksboot into / and
#                        registers a new AMI (make ami; needs AWS credentials);
#   null.staging         lays out a stand-in of the source image (fake-image.sh) in
#                        var.staging_dir and runs install.sh into it on this machine,
#                        so the provisioning path is tested without AWS (make test).
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
  # What make build and make man write. A fresh checkout has neither, and Packer would
  # only say "stat ../bin/eksboot: no such file": the path it reports names the fix.
  default_binary = "${path.root}/../bin/eksboot"
  eksboot_binary = var.eksboot_binary != "" ? var.eksboot_binary : (
    fileexists(local.default_binary) ? local.default_binary : "${local.default_binary} is missing: run make build first (or give -var eksboot_binary=PATH)"
  )
  # eksboot-render, the program `eksboot render` execs, goes beside eksboot.
  default_render_binary = "${var.eksboot_binary != "" ? dirname(var.eksboot_binary) : "${path.root}/../bin"}/eksboot-render"
  eksboot_render_binary = var.eksboot_render_binary != "" ? var.eksboot_render_binary : (
    fileexists(local.default_render_binary) ? local.default_render_binary : "${local.default_render_binary} is missing: run make build first (or give -var eksboot_render_binary=PATH)"
  )
  default_docs = "${path.root}/../bin/docs"
  docs_dir = var.docs_dir != "" ? var.docs_dir : (
    fileexists("${local.default_docs}/eksboot.8") ? local.default_docs : "${local.default_docs} is missing: run make man first (or give -var docs_dir=PATH)"
  )
  units_dir     = "${path.root}/../assets"
  install_sh    = "${path.root}/install.sh"
  fake_image_sh = "${path.root}/fake-image.sh"
  # The kubelet version of the local source's stand-in image.
  staging_kubelet_version = var.kubelet_version != "" ? var.kubelet_version : "v${var.kubernetes_version}.0"
  # Where the amazon-ebs build uploads the binaries and the units before install.sh runs.
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

  # On the build instance: upload the binaries, the bootstrap.sh shim and the units,
  # then run install.sh as root.
  provisioner "shell" {
    only   = ["amazon-ebs.eks-node"]
    inline = ["mkdir -p ${local.upload_dir}"]
  }

  provisioner "file" {
    only        = ["amazon-ebs.eks-node"]
    source      = local.eksboot_binary
    destination = "${local.upload_dir}/eksboot"
  }

  provisioner "file" {
    only        = ["amazon-ebs.eks-node"]
    source      = local.eksboot_render_binary
    destination = "${local.upload_dir}/eksboot-render"
  }

  # eksboot(8) and the completion scripts (make man).
  provisioner "file" {
    only        = ["amazon-ebs.eks-node"]
    source      = "${local.docs_dir}/"
    destination = "${local.upload_dir}/docs"
  }

  provisioner "file" {
    only        = ["amazon-ebs.eks-node"]
    source      = "${local.units_dir}/bootstrap.sh"
    destination = "${local.upload_dir}/bootstrap.sh"
  }

  provisioner "file" {
    only        = ["amazon-ebs.eks-node"]
    source      = "${local.units_dir}/kubelet.service"
    destination = "${local.upload_dir}/kubelet.service"
  }

  provisioner "file" {
    only        = ["amazon-ebs.eks-node"]
    source      = "${local.units_dir}/eksboot-config.service"
    destination = "${local.upload_dir}/eksboot-config.service"
  }

  provisioner "file" {
    only        = ["amazon-ebs.eks-node"]
    source      = "${local.units_dir}/eksboot-run.service"
    destination = "${local.upload_dir}/eksboot-run.service"
  }

  provisioner "shell" {
    only   = ["amazon-ebs.eks-node"]
    script = local.install_sh
    environment_vars = [
      "DESTDIR=/",
      "EKSBOOT_BINARY=${local.upload_dir}/eksboot",
      "EKSBOOT_RENDER_BINARY=${local.upload_dir}/eksboot-render",
      "UNITS_DIR=${local.upload_dir}",
      "DOCS_DIR=${local.upload_dir}/docs",
    ]
    execute_command = "sudo env {{ .Vars }} sh '{{ .Path }}'"
  }

  # A smoke test of the result: the binaries run and eksboot answers as bootstrap.sh,
  # eksboot's boot units are enabled and nodeadm's are not (on AL2 there are none).
  provisioner "shell" {
    only = ["amazon-ebs.eks-node"]
    inline = [
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
  # same install.sh into it.
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
    only   = ["null.staging"]
    script = local.install_sh
    environment_vars = [
      "DESTDIR=${var.staging_dir}",
      "EKSBOOT_BINARY=${local.eksboot_binary}",
      "EKSBOOT_RENDER_BINARY=${local.eksboot_render_binary}",
      "UNITS_DIR=${local.units_dir}",
      "DOCS_DIR=${local.docs_dir}",
      "KUBELET_VERSION=${local.staging_kubelet_version}",
    ]
    execute_command = ["/bin/sh", "-c", "{{ .Vars }} /bin/sh {{ .Script }}"]
  }
}
