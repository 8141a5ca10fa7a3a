#!/bin/sh
# /etc/eks/bootstrap.sh of an eksboot node image: runs `eksboot bootstrap` with this
# script's arguments, unchanged.
#
# It is a script, not a symlink to eksboot, for one reason: user data may edit it
# before calling it. eksctl's maxPodsPerNode does
#   sed -i 's/KUBELET_EXTRA_ARGS=[$]2/KUBELET_EXTRA_ARGS="[$]2 --max-pods=N"/' /etc/eks/bootstrap.sh
# (written here with [$] so that the sed leaves this comment alone), which on the
# Amazon Linux 2 image changed the line of bootstrap.sh's option loop that took the
# value of --kubelet-extra-args. The loop below has that line, alone and exactly once,
# and passes the value it assigns on to eksboot: edited, the node gets the extra
# flag; unedited, eksboot gets every argument as it was given (quoting, empty
# arguments, the --flag=value form), in the same order.
#
# The loop moves each argument from the front of the list to its end, so that "$@"
# holds the result without arrays (POSIX sh has none); n counts what is left to walk.
set -eu

n=$#
joined=
while [ "$n" -gt 0 ]; do
	case $1 in
	--kubelet-extra-args=*)
		# Split the --flag=value form so that its value is $2 below; it is joined
		# again on the way out.
		value=${1#--kubelet-extra-args=}
		shift
		set -- --kubelet-extra-args "$value" "$@"
		n=$((n + 1))
		joined=1
		;;
	--kubelet-extra-args)
		if [ "$n" -lt 2 ]; then
			# No value: eksboot reports it.
			set -- "$@" "$1"
			shift
			n=$((n - 1))
			continue
		fi
		KUBELET_EXTRA_ARGS=$2
		if [ -n "$joined" ]; then
			set -- "$@" "--kubelet-extra-args=$KUBELET_EXTRA_ARGS"
		else
			set -- "$@" "$1" "$KUBELET_EXTRA_ARGS"
		fi
		shift 2
		n=$((n - 2))
		joined=
		;;
	*)
		set -- "$@" "$1"
		shift
		n=$((n - 1))
		;;
	esac
done

exec /usr/bin/eksboot bootstrap "$@"
