#!/bin/sh
# Idempotent setup for a fresh Debian 12 machine (run as root, or with sudo available):
# installs the Debian packages partrain needs, bootstraps autotools, configures and builds.
#
#   scripts/setup.sh            install + bootstrap + configure + make + prepare the data
#   SETUP_SKIP_BUILD=1 scripts/setup.sh   install only
#   CONFIGURE_FLAGS="--with-cuda" scripts/setup.sh
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

# check, clang-format, clang and libclang-rt-14-dev (libFuzzer) are for scripts/test.sh;
# iproute2 (ip, tc) and util-linux (unshare, nsenter) for scripts/cluster.sh; slurmctld,
# slurmd, slurm-client and munge for scripts/slurm-cluster.sh (it runs its own daemons on
# its own sockets and ports, inside namespaces: Debian's services, where an init starts
# them, do not get in its way); python3 for tests/test_timeline.sh (its JSON check);
# gnuplot-nox for scripts/plot-run.sh
pkgs="build-essential autoconf automake libtool pkg-config \
      libopenmpi-dev openmpi-bin libopenblas-dev libinih-dev libstb-dev check clang-format \
      clang libclang-rt-14-dev dataset-fashion-mnist iproute2 util-linux \
      slurmctld slurmd slurm-client munge python3 gnuplot-nox"

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

missing=""
for p in $pkgs; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
if [ -n "$missing" ]; then
    echo "setup: installing:$missing"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
    # shellcheck disable=SC2086
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
else
    echo "setup: all Debian packages present"
fi

[ "${SETUP_SKIP_BUILD:-0}" = 1 ] && exit 0

if [ ! -x configure ] || [ configure.ac -nt configure ] || [ ! -f Makefile.in ] \
   || [ Makefile.am -nt Makefile.in ]; then
    echo "setup: autoreconf"
    autoreconf -fi
fi
if [ ! -f Makefile ] || [ configure -nt config.status ]; then
    # shellcheck disable=SC2086
    ./configure ${CONFIGURE_FLAGS:-}
fi
make -j"$(nproc)"
# the real data: Debian's Fashion-MNIST as CTF under data/fashion-mnist/ (idempotent)
[ "${SETUP_SKIP_DATA:-0}" = 1 ] || scripts/prepare-fashion-mnist.sh
