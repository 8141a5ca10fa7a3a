// Command eksboot joins an EC2 instance to an Amazon EKS cluster. It is a drop-in for
// /etc/eks/bootstrap.sh; see the README.
package main

import (
	"os"

	"github.com/eksboot/eksboot/cli"
)

func main() {
	linkRender()
	os.Exit(cli.Main(os.Args, os.Stdout, os.Stderr))
}
