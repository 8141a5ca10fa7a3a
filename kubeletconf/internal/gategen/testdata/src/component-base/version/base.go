package version

const DefaultKubeBinaryVersion = "1.30"
