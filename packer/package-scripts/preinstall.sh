# The packages' script before their files are unpacked (RPM %pre, DEB preinst), on a
# first install only: what install.sh checks and keeps before it writes. nodeadm's
# links must be ones this can remove (a failure here stops the install with nothing
# changed), and the image's own bootstrap.sh and kubelet.service are kept aside as
# .orig, since the package's files take their paths.
case ${1:-} in
1 | install) ;; # RPM: the number of versions installed after this one; DEB: install
*) exit 0 ;;    # an upgrade, or a DEB abort-upgrade: the first install kept them
esac
detect_image
find_nodeadm_links
say "image: $image ($image_from)"
keep_original /etc/eks/bootstrap.sh
keep_original /etc/systemd/system/kubelet.service
