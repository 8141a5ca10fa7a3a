# The packages' script after their files are removed (RPM %postun, DEB postrm remove
# or purge), when the package goes: the image as it was before eksboot. Its own
# bootstrap.sh and kubelet.service come back from .orig, and on AL2023 nodeadm's
# units, present on the image, are enabled again (the EKS image ships them enabled;
# install.sh and the first install disabled them).
case ${1:-} in
0 | remove | purge) ;;
*) exit 0 ;;
esac
restore_original /etc/eks/bootstrap.sh
restore_original /etc/systemd/system/kubelet.service
detect_image
if [ "$image" = al2023 ]; then
	for unit in $nodeadm_units; do
		file=$(unit_file "$unit")
		if [ -n "$file" ]; then enable_unit "$file"; fi
	done
fi
reload_systemd
