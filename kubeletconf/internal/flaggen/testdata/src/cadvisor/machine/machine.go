package machine

import "flag"

var bootIDFile string

func init() {
	flag.StringVar(&bootIDFile, "boot_id_file", "", "usage")
}
