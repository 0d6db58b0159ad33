# SPDX-License-Identifier: GPL-2.0
# The two-machine lab's network, run by both machines
# (run.py --suites net --peer-suites net): A pings B, sends it NET_BYTES
# of random data over TCP, and B answers with their md5.  Each machine
# reports its half; the figures (guest seconds, rate, TCP retransmissions)
# say what the emulated Ethernet costs.
NET_BYTES=${NET_BYTES:-4194304}

if [ -z "$LAB_PEER" ]; then
	lab_skip net "not a two-machine boot (run.py --peer-suites)"
	return 0
fi

# net_counters: eth0's frames and its interrupts, as fields
net_counters() {
	local d=/sys/class/net/eth0/statistics
	echo "rx_packets=$(cat $d/rx_packets) tx_packets=$(cat $d/tx_packets)" \
		"rx_dropped=$(cat $d/rx_dropped) irqs=$(awk '/eth0/ { print $2 }' /proc/interrupts)"
}

# retrans: TCP segments this machine sent again so far
retrans() { awk '/^Tcp: [0-9]/ { print $13 }' /proc/net/snmp; }

case $LAB_HOST in
a)
	t0=$(lab_now)
	if ! peer_up; then
		lab_fail net.ping "$LAB_PEER never answered ping $(net_counters)"
	elif ping -c 3 -w 60 "$LAB_PEER" > /tmp/ping.out 2>&1; then
		lab_pass net.ping "$(tail -1 /tmp/ping.out) waited=$(secs "$t0" "$(lab_now)")"
	else
		lab_fail net.ping "$(tail -2 /tmp/ping.out | tr '\n' ' ') $(net_counters)"
	fi
	head -c "$NET_BYTES" /dev/urandom > /tmp/net.blob
	sum=$(md5sum < /tmp/net.blob | cut -c1-32)
	r0=$(retrans)
	t0=$(lab_now)
	if ! peer_send 7001 /tmp/net.blob; then
		lab_fail net.transfer "nobody took $NET_BYTES bytes on $LAB_PEER:7001"
		return 0
	fi
	t1=$(lab_now)
	got=$(peer_hear 7002)
	if [ "$got" = "$sum" ]; then
		lab_pass net.transfer "bytes=$NET_BYTES secs=$(secs "$t0" "$t1") kib_per_s=$(awk "BEGIN{printf \"%d\", $NET_BYTES / 1024 / ($t1 - $t0 + 0.001)}") retrans=$(($(retrans) - r0)) md5=$sum"
	else
		lab_fail net.transfer "md5 sent $sum, B received ${got:-nothing}"
	fi
	;;
b)
	r0=$(retrans)
	if peer_recv 7001 /tmp/net.blob; then
		sum=$(md5sum < /tmp/net.blob | cut -c1-32)
		peer_say 7002 "$sum"
		lab_pass net.receive "bytes=$(wc -c < /tmp/net.blob) retrans=$(($(retrans) - r0)) md5=$sum"
	else
		lab_fail net.receive "no connection from A on port 7001 $(net_counters)"
	fi
	;;
esac
