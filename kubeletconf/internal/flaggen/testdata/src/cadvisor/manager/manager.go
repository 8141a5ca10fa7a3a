package manager

import (
	"flag"

	_ "github.com/google/cadvisor/machine"
)

var housekeeping = flag.Duration("housekeeping_interval", 0, "usage")

var enableLoadReader = flag.Bool("enable_load_reader", false, "usage")
