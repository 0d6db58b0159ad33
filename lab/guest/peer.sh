# SPDX-License-Identifier: GPL-2.0
# The two-machine lab (run.py --peer-suites): machines A and B on one
# emulated Ethernet (e1000 cards joined by bxhub).  init brings eth0 up with
# the address the kernel command line gives (lab.ip=, lab.peer=, lab.host=)
# and the suites talk to the peer with busybox nc through these helpers.
# Each step is a connection: the listener is up first, the sender retries
# until it is (the two machines' clocks run apart, neither can wait for
# the other by time).  Sourced after /lab/lib.sh.

# cmdline_key KEY: the value of KEY= on the kernel command line
cmdline_key() { sed -n "s/.*$1=\([^ ]*\).*/\1/p" /proc/cmdline; }

LAB_HOST=$(cmdline_key lab.host)
LAB_IP=$(cmdline_key lab.ip)
LAB_PEER=$(cmdline_key lab.peer)
# a fifo nobody writes: a listening nc's stdin that never ends (busybox nc
# exits when its stdin does, even while the peer still sends)
PEER_NEVER=/run/peer-never

# peer_net_up: eth0 with this machine's address; an INFO line for the host
peer_net_up() {
	[ -n "$LAB_IP" ] || return 0
	[ -p $PEER_NEVER ] || mkfifo $PEER_NEVER
	# a gratuitous ARP: bxhub learns a port's MAC only from a broadcast
	# frame (misc/bxhub.cc handle_packet) and drops unicast to a MAC it has
	# not learned, so a machine that only ever answers is unreachable
	if ip link set eth0 up && ip addr add "$LAB_IP" dev eth0; then
		arping -q -U -c 1 -I eth0 "${LAB_IP%/*}"
		lab_line INFO net "host=$LAB_HOST ip=$LAB_IP peer=$LAB_PEER mac=$(cat /sys/class/net/eth0/address)"
	else
		lab_fail net.up "eth0: $(ls /sys/class/net | tr '\n' ' ')"
	fi
}

# peer_up [TRIES]: wait until the peer answers ping (one try a second of
# guest time, default 600): an idle guest's clock runs far ahead of a
# booting one's, so a few pings can all go out before the peer is up.  A
# ping that fails at once (no route yet: eth0 still coming up on a loaded
# host) waits out its second too, or 600 tries were gone in a moment.
peer_up() {
	local i=0
	until ping -c 1 -W 1 "$LAB_PEER" > /dev/null 2>&1; do
		i=$((i + 1))
		[ $i -ge "${1:-600}" ] && return 1
		sleep 1
	done
}

# peer_recv PORT FILE [SECONDS]: the bytes of the next connection to PORT
# into FILE; fails after SECONDS (default 600) of guest time without one
peer_recv() {
	timeout "${3:-600}" nc -l -p "$1" > "$2" 0<> $PEER_NEVER
}

# peer_send PORT FILE [TRIES]: FILE to the peer's PORT, trying again every
# half second while nobody listens there (default 600 tries)
peer_send() {
	local i=0
	until nc -w 10 "$LAB_PEER" "$1" < "$2" 2>/dev/null; do
		i=$((i + 1))
		[ $i -ge "${3:-600}" ] && return 1
		sleep 0.5
	done
}

# peer_say PORT WORDS: a one-line message to the peer (peer_hear)
peer_say() {
	local port=$1 f=/run/peer-say.$$
	shift
	echo "$*" > $f && peer_send "$port" $f
	rm -f $f
}

# peer_hear PORT [SECONDS]: the peer's next peer_say to PORT, printed
peer_hear() {
	local f=/run/peer-hear.$$
	peer_recv "$1" $f "${2:-600}" && cat $f
	rm -f $f
}

# pod_up NETNS ADDRESS: a pod's network namespace (/run/netns/NETNS) with
# ADDRESS/32 on its eth0, the other end (vk0) in this machine's namespace,
# routed to (from this machine's own address, when it has one: a client's
# connection is the same wherever the pod runs); the pod reaches the world
# through a link-local gateway that is vk0's own address on every machine
# (as Calico's 169.254.1.1), forwarded from there.  iproute2's ip: busybox's
# has no netns
pod_up() {
	local ip=/usr/sbin/ip
	$ip netns add "$1" &&
		$ip link add vk0 type veth peer name eth0 netns "$1" &&
		$ip -n "$1" link set lo up && $ip -n "$1" link set eth0 up &&
		$ip -n "$1" addr add "$2/32" dev eth0 &&
		$ip -n "$1" route add 169.254.1.1 dev eth0 &&
		$ip -n "$1" route add default via 169.254.1.1 dev eth0 &&
		$ip addr add 169.254.1.1/32 dev vk0 &&
		$ip link set vk0 up &&
		echo 1 > /proc/sys/net/ipv4/ip_forward &&
		$ip route replace "$2/32" dev vk0 ${LAB_IP:+src ${LAB_IP%/*}}
}

# pod_down NETNS: the pod's namespace gone, and with it vk0 and its route
pod_down() { /usr/sbin/ip netns del "$1" 2>/dev/null; }
