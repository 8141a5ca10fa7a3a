// Package packer holds the Packer template that bakes eksboot into an EKS node image
// (eksboot.pkr.hcl, variables.pkr.hcl) and install.sh, the one script that does the
// work on the image. It has no Go code of its own: its tests run `packer validate`,
// the template's local source into a staging root, the staged /etc/eks/bootstrap.sh
// against the fake IMDS and EC2, and shellcheck, so `make test` covers the image
// build without AWS.
package packer
