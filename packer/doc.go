// Package packer holds the Packer template that bakes eksboot into an EKS node image
// (eksboot.pkr.hcl, variables.pkr.hcl) by installing its RPM, install.sh, which does
// the same on any root without a package manager (the tarball's installer), with
// image-lib.sh, the steps install.sh and the packages' scripts (package-scripts/)
// share, and fake-image.sh, which lays out a stand-in of the source image (AL2023
// or AL2) for the template's local source. It has no Go code of its own: its tests
// run `packer validate` and `packer inspect`, the local source into a staging root of
// each image family, the RPM and the DEB against install.sh with rpm --root and
// dpkg --root, the staged /etc/eks/bootstrap.sh (the shim assets/bootstrap.sh)
// against the fake IMDS and EC2, the shim with a recording eksboot before and after
// eksctl's sed hook, and shellcheck, so `make test` covers the image build without
// AWS.
package packer
