# The packages' script before their files are removed (RPM %preun, DEB prerm remove),
# when the package goes (not on an upgrade): eksboot's units are disabled, their links
# removed as `systemctl disable` does, kubelet.service's too (eksboot enables it at a
# node's boot).
case ${1:-} in
0 | remove) ;; # RPM: no version left after this; DEB: remove
*) exit 0 ;;
esac
for unit in $eksboot_units; do
	disable_unit "$unit"
done
