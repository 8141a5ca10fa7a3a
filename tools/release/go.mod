// A build-only module: tools/release, the program of make package. A module of its
// own so that what it requires never enters eksboot's go.mod, its go.sum or a
// binary built from it.
module github.com/eksboot/eksboot/tools/release

go 1.26
