# Sourced by scripts/setup, build-deb and check-deb: Debian packages installed when missing.

# apt_install_missing WHO PACKAGE...: installs those of the packages that are not installed,
# through sudo when not root; says so on stderr, where apt's own output goes too.
apt_install_missing() {
    local who=$1 pkg
    shift
    local missing=()
    for pkg in "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
            missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "$who: installing Debian packages: ${missing[*]}" >&2
    local sudo=()
    [ "$(id -u)" -ne 0 ] && sudo=(sudo)
    {
        "${sudo[@]}" apt-get update -qq
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
            apt-get install -y -qq --no-install-recommends "${missing[@]}"
    } >&2
}
