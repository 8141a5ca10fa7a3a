// Package sim evaluates user data's shell-script, boothook and #cloud-config parts
// (write_files, bootcmd, runcmd) in cloud-init's order on a simulated node
// (Evaluate), for eksboot render: scripts are parsed and interpreted by
// mvdan.cc/sh/v3 as bash would run them, with an in-memory file system, IMDS
// answered from a simulated instance, the text tools run in-process and every other
// program a no-op, so that render shows the /etc/eks/bootstrap.sh calls a node
// would make without running anything on the host.
//
// Nothing on the boot path imports it: eksboot bootstrap and init never evaluate a
// script (cloud-init runs them on the node), and only eksboot-render, the program
// `eksboot render` execs, links it. Every evaluation is bounded (Limits on
// its steps, time, output and depth), and its errors name the part and the line.
package sim
