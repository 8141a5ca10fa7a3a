# The plugins of eksboot.pkr.hcl, for Packer 1.10 and later, which ship none: run
#
#   packer init packer/plugins
#
# once (it installs them into Packer's plugin folder, where `packer build` finds them).
# This file sits in a folder of its own because Packer 1.6.6 (Debian's, which CI
# uses to validate the template and run its local build) refuses required_plugins;
# that Packer has the Amazon builder built in.
packer {
  required_version = ">= 1.10.0"
  required_plugins {
    amazon = {
      version = ">= 1.3.0, < 2.0.0"
      source  = "github.com/hashicorp/amazon"
    }
  }
}
