#!/bin/sh
# A single-threaded poll() producer (examples/ipc/poll-producer.c, written as
# include/hurray_ipc.h describes) against real processes: three connections
# that never say HELLO, two consumers that never read, one that floods
# RELEASEs of IDs never sent; four correct consumers connecting meanwhile
# must each be sent 300 buffers (more than a socket holds, so the mute ones
# fill theirs) and release them all. Every process is bounded in time.
#
# usage: poll_loop.sh POLL_PRODUCER TEST_PEER RAW_PEER DIR
set -u
prod=$1 peer=$2 raw=$3 dir=$4
sock="$dir/hurray-poll-loop-$$.sock"
rm -f "$sock"
log="$dir/hurray-poll-loop-$$.log"
"$prod" "$sock" 4 300 40 > "$log" 2>&1 & p=$!
i=0
while [ ! -S "$sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
hostile=""
for k in 1 2 3; do "$raw" silent "$sock" > /dev/null & hostile="$hostile $!"; done
for k in 1 2; do "$raw" mute "$sock" > /dev/null & hostile="$hostile $!"; done
"$raw" release-flood "$sock" 100000 > /dev/null & hostile="$hostile $!"
correct=""
for k in 1 2 3 4; do "$peer" connect "$sock" 300 & correct="$correct $!"; done
fail=0
for c in $correct; do wait "$c" || { echo "poll_loop: a correct consumer failed"; fail=1; }; done
wait "$p" || { echo "poll_loop: the producer did not serve every correct consumer"; fail=1; }
cat "$log"
# the two mute consumers (at least) were accepted and held, not served
grep -Eq "4 of 4 consumers served; ([2-9]|[1-9][0-9]) channels still open" "$log" ||
  { echo "poll_loop: the mute consumers were not held open"; fail=1; }
for h in $hostile; do kill -9 "$h" 2> /dev/null; done
for h in $hostile; do wait "$h" 2> /dev/null; done
rm -f "$sock" "$log"
[ $fail -eq 0 ] && echo "poll_loop: every correct consumer served"
exit $fail
