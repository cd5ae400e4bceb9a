#!/bin/sh
# Pack built programs for a machine that has glibc, libstdc++ and CUDA (under
# /usr/local/cuda) but no Open MPI, OpenBLAS or inih: the programs, every other
# shared library they load, and this host's Open MPI 4.1 runtime (mpiexec, orted,
# MCA and PMIx components, help and config files), relocated by an env.sh.
#
#   scripts/device-bundle.sh BUILDDIR OUTDIR        # here (Debian 12): OUTDIR/bundle.tar.xz
#
# On the device machine (e.g. OUTDIR=.dev, which travels with the working tree):
#
#   mkdir -p /tmp/pt && tar -xJf .dev/bundle.tar.xz -C /tmp/pt && . /tmp/pt/env.sh
#   mpiexec -n 2 --oversubscribe trainer configFile=configs/fashion-mlp.cfg ...
#
# BUNDLE_PROGRAMS: the programs (and the CUDA plugin partrain-cuda.so, which the programs
# find beside themselves in bin/), relative to BUILDDIR or absolute (default below);
# those not built are skipped, except trainer. Libtool wrappers are replaced by
# their .libs/ binaries. Bundle layout: bin/ (programs, mpiexec, orted, ompi_info),
# lib/ (libraries under their sonames), lib/openmpi/ and lib/pmix/ (MCA
# components), lib/ucx/ (UCX modules), share/openmpi/, share/pmix/, etc/, env.sh,
# origins.txt (where each file came from).
set -eu

usage() { echo "usage: $0 BUILDDIR OUTDIR" >&2; exit 2; }
die() { echo "device-bundle: $*" >&2; exit 1; }
[ $# -eq 2 ] || usage
build=$(cd "$1" && pwd) || die "no build directory $1"
mkdir -p "$2"
out=$(cd "$2" && pwd)
programs=${BUNDLE_PROGRAMS-trainer partrain-cuda.so tests/test_cuda_ops tests/test_dpsgd_engine tests/test_nn tests/test_nn_lstm tests/test_graph tests/test_nn_model tests/htk_gen bench/gpu_bench scripts/idx2ctf}
cuda=${CUDA_HOME:-/usr/local/cuda}
# Debian 12's packages of the Open MPI runtime (and its PMIx)
ompi_lib_pkg=libopenmpi3 ompi_bin_pkg=openmpi-bin ompi_data_pkg=openmpi-common
pmix_pkg=libpmix2

for tool in dpkg ldd objdump tar xz; do
    command -v $tool >/dev/null 2>&1 || die "needs $tool"
done
for pkg in $ompi_lib_pkg $ompi_bin_pkg $ompi_data_pkg $pmix_pkg; do
    dpkg -L "$pkg" >/dev/null 2>&1 || die "package $pkg is not installed"
done

stage=$(mktemp -d "${TMPDIR:-/tmp}/device-bundle.XXXXXX")
trap 'rm -rf "$stage"' EXIT INT TERM
root=$stage/root
mkdir -p "$root/bin" "$root/lib/openmpi" "$root/lib/pmix" "$root/lib/hwloc" \
    "$root/share/openmpi" "$root/share/pmix" "$root/etc"
# ELF files whose libraries go into lib/ ("where it came from" per line);
# origins.txt records where each bundled file came from
scan=$stage/scan
: >"$scan"
: >"$root/origins.txt"

is_elf() { [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }

# put: copy FILE (symlinks followed) to bundle path DEST, remember its origin
put() {
    mkdir -p "$(dirname "$root/$2")"
    cp -L "$1" "$root/$2"
    echo "$2 <- $(readlink -f "$1")" >>"$root/origins.txt"
}

# 1. The programs: real ELF files, or the binary behind a libtool wrapper.
bundled=0
for p in $programs; do
    case $p in /*) src=$p ;; *) src=$build/$p ;; esac
    name=$(basename "$p")
    if [ ! -f "$src" ]; then
        [ "$name" != trainer ] || die "$src is not built"
        echo "device-bundle: skipped $p (not built)" >&2
        continue
    fi
    if ! is_elf "$src"; then
        dir=$(dirname "$src")
        if grep -q 'libtool' "$src" 2>/dev/null && [ -f "$dir/.libs/$name" ]; then
            src=$dir/.libs/$name
        elif grep -q 'libtool' "$src" 2>/dev/null && [ -f "$dir/.libs/lt-$name" ]; then
            src=$dir/.libs/lt-$name
        else
            die "$src is neither an ELF file nor a libtool wrapper with a .libs/ binary"
        fi
        is_elf "$src" || die "$src is not an ELF file"
    fi
    put "$src" "bin/$name"
    chmod 755 "$root/bin/$name"
    echo "$src" >>"$scan"
    bundled=$((bundled + 1))
done
[ $bundled -gt 0 ] || die "none of the programs ($programs) is built in $build"

# 2. Open MPI: launcher, daemon, ompi_info; mpiexec and mpirun are orterun.
for f in $(dpkg -L $ompi_bin_pkg | grep -E '/bin/(orterun|orted|ompi_info)$'); do
    put "$f" "bin/$(basename "$f")"
    echo "$f" >>"$scan"
done
if [ ! -f "$root/bin/orterun" ] || [ ! -f "$root/bin/orted" ]; then
    die "$ompi_bin_pkg has no orterun/orted"
fi
ln -s orterun "$root/bin/mpiexec"
ln -s orterun "$root/bin/mpirun"

# MCA components (Debian: .../openmpi/lib/openmpi3/), found beside mca_pml_ob1.so
comp=$(dpkg -L $ompi_lib_pkg | grep '/mca_pml_ob1\.so$' | head -n 1)
[ -n "$comp" ] || die "$ompi_lib_pkg has no mca_pml_ob1.so"
for f in $(dpkg -L $ompi_lib_pkg | grep "^$(dirname "$comp")/[^/]*\.so\$"); do
    put "$f" "lib/openmpi/$(basename "$f")"
    echo "$f" >>"$scan"
done

# PMIx components (Debian: .../pmix2/lib/pmix/pmix_mca_*.so) and help texts
for f in $(dpkg -L $pmix_pkg | grep -E '/pmix/pmix_mca_[^/]*\.so$'); do
    put "$f" "lib/pmix/$(basename "$f")"
    echo "$f" >>"$scan"
done
for f in $(dpkg -L $pmix_pkg | grep -E '/share/pmix/help-[^/]*\.txt$'); do
    put "$f" "share/pmix/$(basename "$f")"
done

# Help texts and data (not the wrapper compilers' data) and the config files
for f in $(dpkg -L $ompi_data_pkg | grep '^/usr/share/openmpi/' | grep -v 'wrapper-data\.txt$'); do
    if [ ! -f "$f" ] || [ -L "$f" ]; then continue; fi
    put "$f" "share/openmpi/${f#/usr/share/openmpi/}"
done
for f in $(dpkg -L $ompi_bin_pkg | grep '^/etc/openmpi/'); do
    if [ -f "$f" ]; then put "$f" "etc/$(basename "$f")"; fi
done
# PMIx's own params file names its component directory by absolute path:
# env.sh sets that instead (PMIX_MCA_mca_base_component_path)
echo "# PMIx MCA parameters (env.sh sets mca_base_component_path)" >"$root/etc/pmix-mca-params.conf"
echo "etc/pmix-mca-params.conf <- written by device-bundle.sh" >>"$root/origins.txt"

# 3. Libraries: ldd lists the whole closure of each file. Left out: glibc,
# libstdc++ and libgcc_s (the target has newer ones) and CUDA (the target has its
# own under $cuda/lib64, as does its driver's libcuda).
on_target() { # SONAME PATH
    case $1 in
        linux-vdso.so.* | ld-linux*.so.* | libc.so.* | libm.so.* | libmvec.so.* | \
            libpthread.so.* | libdl.so.* | librt.so.* | libresolv.so.* | libutil.so.* | \
            libanl.so.* | libnss_*.so.* | libthread_db.so.* | libBrokenLocale.so.* | \
            libc_malloc_debug.so.* | libstdc++.so.* | libgcc_s.so.*) return 0 ;;
        libcuda.so.* | libcudart.so.* | libcublas.so.* | libcublasLt.so.* | libnvidia-*) return 0 ;;
    esac
    case $2 in "$cuda"/* | "$(readlink -f "$cuda")"/*) return 0 ;; esac
    return 1
}

# libs FILE...: bundle the libraries of the files; programs must resolve all
libs() {
    for f in "$@"; do
        ldd "$f" 2>/dev/null | while read -r soname arrow path rest; do
            [ "$arrow" = '=>' ] || continue
            if [ "$path" = not ]; then
                on_target "$soname" "" && continue
                echo "device-bundle: $f: $soname not found" >&2
                echo "$f" >>"$stage/missing"
                continue
            fi
            on_target "$soname" "$path" && continue
            [ -e "$root/lib/$soname" ] || put "$path" "lib/$soname"
        done
    done
}
# shellcheck disable=SC2046
libs $(cat "$scan")
# UCX loads its transports from ucx/ beside libucs: bring them and theirs
if grep -q '^lib/libucs\.so\.[0-9]* <- ' "$root/origins.txt"; then
    ucs=$(sed -n 's|^lib/libucs\.so\.[0-9]* <- ||p' "$root/origins.txt" | head -n 1)
    for f in "$(dirname "$ucs")"/ucx/lib*.so.[0-9]; do
        [ -f "$f" ] || continue
        put "$f" "lib/ucx/$(basename "$f")"
        libs "$f"
    done
fi
if [ -s "$stage/missing" ]; then
    # a component that cannot load only fails if selected; a program always does
    while read -r f; do
        case $f in */mca_* | */pmix_mca_*) ;; *) die "$f needs a library that is not found" ;; esac
    done <"$stage/missing"
fi
# lib/hwloc/ stays empty: no hwloc plugins (the target's, if any, are a newer hwloc's)

# Check: with lib/ first, every ELF file finds all but the target's libraries here.
find "$root" -type f \( -path "$root/bin/*" -o -name '*.so*' \) >"$stage/elves"
while read -r f; do
    LD_LIBRARY_PATH=$root/lib ldd "$f" 2>/dev/null | while read -r soname arrow path rest; do
        if [ "$arrow" != '=>' ] || [ "$path" = not ]; then continue; fi
        case $path in "$root"/*) continue ;; esac
        on_target "$soname" "$path" || echo "${f#"$root"/} loads $path"
    done
done <"$stage/elves" >"$stage/leaks"
[ ! -s "$stage/leaks" ] || { cat "$stage/leaks" >&2; die "libraries outside the bundle"; }
# the newest glibc symbol version needed (env.sh warns on an older glibc)
glibc=$(xargs objdump -T <"$stage/elves" 2>/dev/null | grep -o 'GLIBC_2\.[0-9]*' \
    | sed 's/GLIBC_2\.//' | sort -n | tail -n 1)

# 4. env.sh: the bundle root from its own location; the relocated Open MPI's
# directories (its compiled-in ones are Debian's /usr/...).
cat >"$root/env.sh" <<'EOF'
# Source this file (bash, dash; zsh untested) to use the programs and Open MPI of this bundle,
# made by partrain's scripts/device-bundle.sh:
#   . /tmp/pt/env.sh && mpiexec -n 2 --oversubscribe trainer --version
# Where a shell cannot tell, PT_BUNDLE=DIR names the bundle.
pt_env='' pt_root=''
if [ -n "${BASH_VERSION:-}" ]; then
    eval 'pt_env=${BASH_SOURCE[0]}'
elif [ -n "${ZSH_VERSION:-}" ]; then
    eval 'pt_env=${(%):-%x}'
fi
if [ "$(basename -- "${pt_env:-x}")" = env.sh ]; then
    pt_root=$(cd "$(dirname -- "$pt_env")" && pwd)
else
    # dash and other sh: the file being sourced is open on one of the shell's fds
    for pt_fd in "/proc/$$/fd/"*; do
        pt_env=$(readlink "$pt_fd" 2>/dev/null) || continue
        case $pt_env in
            */env.sh) if [ -x "${pt_env%/env.sh}/bin/orterun" ]; then pt_root=${pt_env%/env.sh}; fi ;;
        esac
    done
fi
if [ -z "$pt_root" ]; then
    if [ -n "${PT_BUNDLE:-}" ]; then
        pt_root=$PT_BUNDLE
    elif [ -f ./env.sh ] && [ -x ./bin/orterun ]; then
        pt_root=$(pwd)
    else
        echo "env.sh: cannot tell where the bundle is; set PT_BUNDLE=DIR" >&2
        return 1 2>/dev/null || exit 1
    fi
fi
export PT_BUNDLE="$pt_root"

export PATH="$pt_root/bin:$PATH"
export LD_LIBRARY_PATH="$pt_root/lib:${CUDA_HOME:-/usr/local/cuda}/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# Open MPI 4.1's install directories (opal installdirs "env" component)
export OPAL_PREFIX="$pt_root" OPAL_EXEC_PREFIX="$pt_root"
export OPAL_BINDIR="$pt_root/bin" OPAL_SBINDIR="$pt_root/bin" OPAL_LIBEXECDIR="$pt_root/bin"
export OPAL_LIBDIR="$pt_root/lib" OPAL_PKGLIBDIR="$pt_root/lib/openmpi"
export OPAL_DATAROOTDIR="$pt_root/share" OPAL_DATADIR="$pt_root/share"
export OPAL_PKGDATADIR="$pt_root/share/openmpi" OPAL_SYSCONFDIR="$pt_root/etc"
export OPAL_INCLUDEDIR="$pt_root/include" OPAL_PKGINCLUDEDIR="$pt_root/include"
export OMPI_MCA_mca_base_component_path="$pt_root/lib/openmpi"
# orted: started by a singleton (a program run without mpiexec) and on other hosts
export OMPI_MCA_orte_launch_agent="$pt_root/bin/orted"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Shared memory between ranks: no single-copy (CMA) reads, which containers often
# forbid (a rank then dies: "Read -1, expected ..., errno = 1"); set it before
# sourcing to keep Open MPI's choice (cma)
export OMPI_MCA_btl_vader_single_copy_mechanism="${OMPI_MCA_btl_vader_single_copy_mechanism:-none}"

# PMIx 4's install directories (pinstalldirs "env" component)
export PMIX_PREFIX="$pt_root" PMIX_EXEC_PREFIX="$pt_root" PMIX_BINDIR="$pt_root/bin"
export PMIX_LIBDIR="$pt_root/lib" PMIX_PKGLIBDIR="$pt_root/lib/pmix"
export PMIX_DATADIR="$pt_root/share" PMIX_PKGDATADIR="$pt_root/share/pmix"
export PMIX_SYSCONFDIR="$pt_root/etc"
export PMIX_MCA_mca_base_component_path="$pt_root/lib/pmix"

# hwloc: no plugins (the bundle has none; a newer system's are not for this hwloc)
export HWLOC_PLUGINS_PATH="$pt_root/lib/hwloc"
EOF
cat >>"$root/env.sh" <<EOF

# Built on $(sed -n 's/^PRETTY_NAME=//p' /etc/os-release | tr -d '"'): needs glibc 2.${glibc:-0} or newer
pt_glibc=\$(getconf GNU_LIBC_VERSION 2>/dev/null)
pt_glibc=\${pt_glibc#glibc 2.}
if [ "\${pt_glibc%%.*}" -lt ${glibc:-0} ] 2>/dev/null; then
    echo "env.sh: this bundle needs glibc 2.${glibc:-0}; here: 2.\$pt_glibc" >&2
fi
unset pt_env pt_root pt_fd pt_glibc
EOF
echo "env.sh <- written by device-bundle.sh" >>"$root/origins.txt"

# 5. The archive: no top folder, so tar -C DIR puts env.sh at DIR/env.sh.
tar -C "$root" --sort=name --owner=0 --group=0 --numeric-owner -cf - . \
    | xz -9 -T1 >"$out/bundle.tar.xz.tmp"
mv "$out/bundle.tar.xz.tmp" "$out/bundle.tar.xz"
nlib=$(find "$root/lib" -name '*.so*' | wc -l)
echo "device-bundle: $out/bundle.tar.xz ($(du -k "$out/bundle.tar.xz" | cut -f1) KiB," \
    "$bundled programs, $nlib libraries and components)"
