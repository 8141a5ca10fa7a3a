package assets

import _ "embed"

// BootstrapShim is /etc/eks/bootstrap.sh of an eksboot node image (installed by
// packer/install.sh); render runs it, as edited by the user data, on its simulated
// node.
//
//go:embed bootstrap.sh
var BootstrapShim []byte
