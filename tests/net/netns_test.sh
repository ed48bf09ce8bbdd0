#!/bin/sh
# A PUT and a GET between two network namespaces joined by a veth pair, so a
# real network stack (two interfaces, routing, TCP) lies between client and
# server. Needs root and iproute2. Where namespaces or veth cannot be made
# (an unprivileged sandbox), it prints why and exits 77 (CTest: skipped).
# Everything it creates is removed on every exit path.
#
# usage: netns_test.sh SERVER_PROGRAM CLIENT_PROGRAM
set -u
server=$1
client=$2
id=$$
ns_a=hurray-net-a-$id
ns_b=hurray-net-b-$id
if_a=hna$id
if_b=hnb$id
work=$(mktemp -d)
spid=
cleanup() {
  [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
  ip netns del "$ns_a" 2>/dev/null
  ip netns del "$ns_b" 2>/dev/null
  ip link del "$if_a" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
skip() {
  echo "SKIP: $1: $(cat "$work/err" 2>/dev/null)"
  exit 77
}
fail() {
  echo "FAIL: $1"
  exit 1
}
command -v ip >/dev/null 2>&1 || { echo "SKIP: iproute2 (ip) is not installed" >"$work/err"; skip "no ip command"; }
ip netns add "$ns_a" 2>"$work/err" || skip "cannot create a network namespace"
ip netns add "$ns_b" 2>"$work/err" || skip "cannot create a second network namespace"
ip link add "$if_a" type veth peer name "$if_b" 2>"$work/err" || skip "cannot create a veth pair"
ip link set "$if_a" netns "$ns_a" 2>"$work/err" || skip "cannot move a veth end into a namespace"
ip link set "$if_b" netns "$ns_b" 2>"$work/err" || skip "cannot move a veth end into a namespace"
ip netns exec "$ns_a" true 2>"$work/err" || skip "cannot run a program in a network namespace"
ip -n "$ns_a" addr add 10.231.0.1/24 dev "$if_a" || fail "address A"
ip -n "$ns_b" addr add 10.231.0.2/24 dev "$if_b" || fail "address B"
for ns in "$ns_a" "$ns_b"; do ip -n "$ns" link set lo up || fail "lo up in $ns"; done
ip -n "$ns_a" link set "$if_a" up || fail "veth A up"
ip -n "$ns_b" link set "$if_b" up || fail "veth B up"
echo "namespaces $ns_a (10.231.0.1, $if_a) and $ns_b (10.231.0.2, $if_b)"

# Beyond loopback the server needs a shared key; both sides read it from a file.
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/key"
ip netns exec "$ns_a" env UCX_TLS=tcp UCX_NET_DEVICES="$if_a" \
  "$server" --address 10.231.0.1 --key-file "$work/key" --port 0 --count 1 --offer 1000000 \
  >"$work/server" 2>&1 &
spid=$!
port=
for _ in $(seq 300); do
  port=$(sed -n 's/^listening on port \([0-9]*\)$/\1/p' "$work/server")
  [ -n "$port" ] && break
  kill -0 "$spid" 2>/dev/null || break
  sleep 0.1
done
[ -n "$port" ] || { cat "$work/server"; fail "the server in $ns_a did not start"; }
echo "server in $ns_a listens on 10.231.0.1:$port"

ip netns exec "$ns_b" env UCX_TLS=tcp UCX_NET_DEVICES="$if_b" \
  "$client" 10.231.0.1 "$port" --size 4194304 --id 7 --get 1 --key-file "$work/key" \
  >"$work/client" 2>&1
rc=$?
cat "$work/client"
[ $rc -eq 0 ] || fail "the client in $ns_b failed (exit $rc)"
grep -q "PUT 4194304 bytes to CPU/STANDARD: landed" "$work/client" || fail "the PUT did not land"
grep -q "GET 1: 1000000 bytes, content checked" "$work/client" || fail "the GET did not check out"
wait "$spid"
src=$?
spid=
cat "$work/server"
[ $src -eq 0 ] || fail "the server exited with $src"
grep -q "landed id 7: 4194304 bytes on CPU/STANDARD" "$work/server" || fail "the server saw no PUT"
# The bytes crossed the veth pair: its receive counter in A holds the PUT.
rx=$(ip -n "$ns_a" -s link show "$if_a" | awk '/RX:/{getline; print $1; exit}')
echo "veth $if_a received $rx bytes"
[ "${rx:-0}" -ge 4194304 ] || fail "the veth pair did not carry the PUT"
echo "netns: PUT and GET crossed a veth pair between two namespaces"
