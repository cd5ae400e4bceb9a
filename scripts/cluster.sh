#!/bin/sh
# A simulated cluster on one Linux machine: N hosts (2..8), each a network namespace with
# its own hostname (a UTS namespace, kept alive by a sleeping process), joined by a Linux
# bridge, so that Open MPI treats them as different nodes and its ranks talk over its real
# TCP transport. Needs root, iproute2 (ip, tc) and util-linux (unshare, nsenter).
#
#   cluster.sh up N [--rate RATE] [--delay DELAY]   start hosts h1..hN (10.77.0.1..N);
#       RATE shapes each host's egress (tc tbf, e.g. 1gbit), DELAY adds latency (netem,
#       e.g. 1ms); prints PT_CLUSTER_DIR=... (export it for the other sub-commands)
#   cluster.sh mpiexec ARGS...     mpiexec from h1 over the hostfile (every host, 2 slots
#       each unless PT_CLUSTER_SLOTS says otherwise), rsh agent = nsenter; TCP between
#       hosts, shared memory within one (PT_CLUSTER_BTL), waiting ranks yield their core
#   cluster.sh exec HOST CMD...    run CMD on HOST (its network and hostname)
#   cluster.sh kill-host HOST      SIGKILL every process on HOST (the host stays up)
#   cluster.sh stop-host HOST      kill-host, then take HOST down (its namespace goes)
#   cluster.sh hostfile            print the hostfile's path
#   cluster.sh check               exit 77 with the reason when this machine cannot run it
#   cluster.sh down                remove everything (also run by a reaper after
#       PT_CLUSTER_TTL seconds, default 3600, so nothing outlives a killed caller)
#
# State lives in $PT_CLUSTER_DIR (default: a new mktemp directory), and the bridge and
# interface names carry a random id, so several clusters can run side by side. Inside a
# cluster the hosts reach only each other and their own loopback (no route out).
# Exit status: 0 ok, 1 failure, 2 usage, 77 this machine cannot run a simulated cluster.
set -u
me=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
net=10.77.0
die() { echo "cluster.sh: $*" >&2; exit 1; }
usage() { sed -n '7,18s/^# \{0,1\}//p' "$me" >&2; exit 2; }

# can_run: every tool, root, and permission to make namespaces and bridges (else exit 77)
can_run() {
    for t in ip tc unshare nsenter timeout; do
        command -v "$t" >/dev/null 2>&1 || { echo "cluster.sh: $t not found (apt-get install iproute2 util-linux coreutils)" >&2; exit 77; }
    done
    [ "$(id -u)" -eq 0 ] || { echo "cluster.sh: needs root (network namespaces, bridges, tc)" >&2; exit 77; }
    timeout 10 unshare --uts --net true 2>/dev/null ||
        { echo "cluster.sh: cannot create network/UTS namespaces here (unshare --uts --net failed)" >&2; exit 77; }
    ip link add "ptchk$$" type bridge 2>/dev/null ||
        { echo "cluster.sh: cannot add a bridge here (ip link add type bridge failed)" >&2; exit 77; }
    ip link del "ptchk$$"
}

# state: the cluster directory (must hold a cluster unless $1 = new)
state() {
    [ -n "${PT_CLUSTER_DIR:-}" ] || die "PT_CLUSTER_DIR is not set (cluster.sh up prints it)"
    dir=$PT_CLUSTER_DIR
    [ "${1:-}" = new ] || [ -f "$dir/id" ] || die "$dir holds no cluster (cluster.sh up first)"
    [ -f "$dir/id" ] && id=$(cat "$dir/id")
    return 0
}

# alive PID: PID is a host's keeper, still running (a zombie has no namespaces left)
alive() {
    [ "$(cat "/proc/$1/comm" 2>/dev/null)" = sleep ] && readlink "/proc/$1/ns/net" >/dev/null 2>&1
}

# pid_of HOST: the keeper process of HOST (its namespaces), or fail with a message
pid_of() {
    case "$1" in h[1-8]) ;; *) die "no host '$1' (hosts are h1..hN)" ;; esac
    [ -f "$dir/$1.pid" ] || die "host $1 is not part of this cluster"
    p=$(cat "$dir/$1.pid")
    alive "$p" || die "host $1 is down"
    echo "$p"
}

# procs_of HOST: every process in HOST's network namespace except its keeper
procs_of() {
    p=$(pid_of "$1") || exit 1
    ns=$(readlink "/proc/$p/ns/net") || die "host $1 is down"
    for d in /proc/[0-9]*; do
        q=${d#/proc/}
        [ "$q" = "$p" ] && continue
        [ "$(readlink "$d/ns/net" 2>/dev/null)" = "$ns" ] && echo "$q"
    done
    return 0
}

cmd_down() {
    state new
    [ -f "$dir/id" ] || return 0
    for f in "$dir"/h*.pid; do
        [ -f "$f" ] || continue
        h=$(basename "$f" .pid)
        p=$(cat "$f")
        if alive "$p"; then
            # shellcheck disable=SC2046
            kill -9 $(procs_of "$h") "$p" 2>/dev/null
        fi
        rm -f "$f"
    done
    ip link del "ptb$id" 2>/dev/null
    for i in 1 2 3 4 5 6 7 8; do ip link del "pt${id}v$i" 2>/dev/null; done
    if [ -f "$dir/reaper.pid" ]; then
        r=$(cat "$dir/reaper.pid")
        # its process group (setsid), so that its sleep goes too
        [ "$r" != "$$" ] && kill -- "-$r" 2>/dev/null
    fi
    rm -f "$dir/id" "$dir/hostfile" "$dir/agent" "$dir/reaper.pid" "$dir/agent.log"
    [ -f "$dir/made" ] && { rm -f "$dir/made"; rmdir "$dir" 2>/dev/null; }
    return 0
}

# add_host I: namespace, hostname, veth pair on the bridge, address, shaping
add_host() {
    i=$1 h=h$1 v=pt${id}v$1 p=""
    # shellcheck disable=SC2016 # $1 and $2 are the inner shell's
    unshare --uts --net sh -c 'echo $$ >"$1"; exec sleep "$2"' keeper "$dir/$h.pid" "$((ttl + 30))" \
        </dev/null >/dev/null 2>&1 &
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        [ -s "$dir/$h.pid" ] && p=$(cat "$dir/$h.pid") && alive "$p" && break
        p="" && sleep 0.2
    done
    [ -n "$p" ] || die "host $h did not start"
    nsenter -t "$p" --uts hostname "$h" || die "cannot set the hostname of $h"
    ip link add "$v" type veth peer name eth0 netns "$p" || die "cannot add a veth pair for $h"
    ip link set "$v" master "ptb$id" up || die "cannot attach $v to the bridge"
    in="nsenter -t $p --net"
    { $in ip link set lo up && $in ip addr add "$net.$i/24" dev eth0 && $in ip link set eth0 up; } ||
        die "cannot configure $h's interfaces"
    if [ -n "$delay" ] && [ -n "$rate" ]; then
        $in tc qdisc add dev eth0 root handle 1: netem delay "$delay" &&
            $in tc qdisc add dev eth0 parent 1: handle 2: tbf rate "$rate" burst 256kb latency 100ms
    elif [ -n "$delay" ]; then
        $in tc qdisc add dev eth0 root netem delay "$delay"
    elif [ -n "$rate" ]; then
        $in tc qdisc add dev eth0 root tbf rate "$rate" burst 256kb latency 100ms
    fi || die "tc could not shape $h (rate '$rate', delay '$delay'; sch_tbf/sch_netem?)"
    echo "$h slots=${PT_CLUSTER_SLOTS:-2}" >>"$dir/hostfile"
}

# write_agent: Open MPI's rsh agent, called as "agent HOST CMD..." (CMD: a shell command
# line, as ssh would get it); it runs CMD on HOST, or fails at once when HOST is down, and
# names the host when the daemon there dies (kill-host)
write_agent() {
    cat >"$dir/agent" <<EOF
#!/bin/sh
h=\$1; shift
echo "\$h \$*" >>"$dir/agent.log"
p=\$(PT_CLUSTER_DIR="$dir" "$me" pid-of "\$h") || exit 255
nsenter -t "\$p" --net --uts -- /bin/sh -c "\$*"
st=\$?
[ \$st -eq 0 ] || echo "cluster.sh: host \$h: the Open MPI daemon there ended with status \$st" >&2
exit \$st
EOF
    chmod +x "$dir/agent"
}

# new_dir: PT_CLUSTER_DIR made (a new mktemp directory, marked "made", when unset), exported,
# holding no cluster yet
new_dir() {
    if [ -z "${PT_CLUSTER_DIR:-}" ]; then
        PT_CLUSTER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ptcluster.XXXXXX") || die "mktemp failed"
        touch "$PT_CLUSTER_DIR/made"
    fi
    export PT_CLUSTER_DIR
    mkdir -p "$PT_CLUSTER_DIR" || die "cannot make $PT_CLUSTER_DIR"
    state new
    [ -f "$dir/id" ] && die "$dir already holds a cluster (cluster.sh down first)"
    return 0
}

cmd_up() {
    [ $# -ge 1 ] || usage
    n=$1 rate="" delay=""
    shift
    case "$n" in [2-8]) ;; *) echo "cluster.sh: up N: N must be 2..8, not '$n'" >&2; exit 2 ;; esac
    while [ $# -gt 0 ]; do
        case "$1" in
        --rate) [ $# -ge 2 ] || usage; rate=$2; shift 2 ;;
        --delay) [ $# -ge 2 ] || usage; delay=$2; shift 2 ;;
        *) usage ;;
        esac
    done
    can_run
    new_dir
    ttl=${PT_CLUSTER_TTL:-3600}
    for _ in 1 2 3 4 5; do
        id=$(od -An -tx1 -N3 /dev/urandom | tr -d ' \n')
        ip link show "ptb$id" >/dev/null 2>&1 || break
    done
    echo "$id" >"$dir/id"
    # from here on, a failure or a signal removes what was made
    trap 'cmd_down' EXIT
    trap 'exit 1' HUP INT TERM
    : >"$dir/hostfile"
    # bridged frames skip the host's iptables (a FORWARD policy of DROP, as Docker sets,
    # would otherwise cut the hosts off from each other)
    ip link add "ptb$id" type bridge nf_call_iptables 0 nf_call_ip6tables 0 nf_call_arptables 0 ||
        die "cannot add bridge ptb$id"
    ip link set "ptb$id" up || die "cannot bring up bridge ptb$id"
    i=1
    while [ "$i" -le "$n" ]; do add_host "$i"; i=$((i + 1)); done
    write_agent
    # the reaper: takes the cluster down after the TTL even if nobody calls down
    # shellcheck disable=SC2016 # $1 and $2 are the inner shell's
    setsid sh -c 'sleep "$1"; exec "$2" down' reaper "$ttl" "$me" \
        </dev/null >/dev/null 2>&1 &
    echo $! >"$dir/reaper.pid"
    trap - EXIT HUP INT TERM
    echo "PT_CLUSTER_DIR=$dir"
}

cmd_mpiexec() {
    state
    p=$(pid_of h1) || exit 1
    # Ranks of different hosts over TCP, ranks of one host over shared memory (vader), as
    # on a real cluster; both the runtime (oob) and MPI traffic on the bridge's subnet.
    # The simulated hosts share this machine's cores, so a waiting rank yields its core
    # (mpi_yield_when_idle) instead of spinning on it while the rank it waits for cannot
    # run; PT_CLUSTER_BTL / PT_CLUSTER_YIELD=0 change that. One-sided windows
    # (DataParallelASGD's store): osc/sm cannot span hosts, osc/rdma needs RDMA hardware
    # and osc/pt2pt MPI_THREAD_MULTIPLE, so UCX's osc over its TCP transport. exec: a
    # signal to this script reaches timeout, then mpiexec.
    exec timeout -k 5 "${PT_CLUSTER_TIMEOUT:-900}" nsenter -t "$p" --net --uts -- \
        "${MPIEXEC:-mpiexec}" --hostfile "$dir/hostfile" --mca plm_rsh_agent "$dir/agent" \
        --mca pml ob1 --mca btl "${PT_CLUSTER_BTL:-tcp,vader,self}" \
        --mca mpi_yield_when_idle "${PT_CLUSTER_YIELD:-1}" --mca btl_tcp_if_include "$net.0/24" \
        --mca oob_tcp_if_include "$net.0/24" \
        --mca osc ucx -x UCX_TLS=tcp,self -x UCX_NET_DEVICES=eth0 "$@"
}

[ $# -ge 1 ] || usage
c=$1
shift
case "$c" in
up) cmd_up "$@" ;;
down) cmd_down ;;
check) can_run ;;
mpiexec) cmd_mpiexec "$@" ;;
exec)
    [ $# -ge 2 ] || usage
    state
    p=$(pid_of "$1") || exit 1
    shift
    exec nsenter -t "$p" --net --uts -- "$@"
    ;;
pid-of) [ $# -eq 1 ] || usage; state; pid_of "$1" ;;
new-dir) new_dir; echo "$dir" ;; # for scripts/slurm-cluster.sh
kill-host | stop-host)
    [ $# -eq 1 ] || usage
    state
    pids=$(procs_of "$1") || exit 1
    [ "$c" = stop-host ] && pids="$pids $(pid_of "$1")"
    # shellcheck disable=SC2086
    [ -z "${pids# }" ] || kill -9 $pids 2>/dev/null
    exit 0
    ;;
hostfile) state; echo "$dir/hostfile" ;;
*) usage ;;
esac
