# The packages' script after their files are in place (RPM %post, DEB postinst
# configure), on a first install only, so that an upgrade keeps what the image's
# maker changed since: what install.sh does once its files are in. An upgrade only
# has systemd reread the units.
first=
case ${1:-} in
1) first=1 ;;                             # RPM: the first version installed
[0-9]*) ;;                                # RPM: an upgrade
configure) [ -n "${2:-}" ] || first=1 ;;  # DEB: no version configured before
*) exit 0 ;;                              # a DEB abort-*: nothing was done
esac
if [ -n "$first" ]; then
	detect_image
	find_nodeadm_links
	# kubelet-version.txt, from the image's kubelet. Without one (a kubelet installed
	# later), eksboot asks `kubelet --version` at boot.
	kubelet_version
	if [ -n "$kubelet_version" ]; then
		write_kubelet_version
	else
		say "no kubelet in the image and KUBELET_VERSION is not set: /etc/eks/kubelet-version.txt not written (eksboot runs kubelet --version at boot)"
	fi
	for unit in $eksboot_units; do
		case " $eksboot_boot_units " in
		*" $unit "*) enable_unit "/etc/systemd/system/$unit" ;;
		*) say "$unit: not enabled in the image (eksboot enables it at boot)" ;;
		esac
	done
	disable_nodeadm
	forget_node_state
fi
reload_systemd
