#!/usr/bin/env python3
"""Python multiprocessing's way of handing a buffer's descriptor to another
process, one at a time: bench/ipc_batch_bench.cpp runs this beside its own
variants (same run) and prints the rate it reports.

    python3 bench/ipc_batch_mp.py SECONDS

The producer owns 64 memfds of 4 KiB; per handoff it sends one with
multiprocessing.reduction.send_handle over a Pipe connection (SCM_RIGHTS
underneath, as torch.multiprocessing's file-descriptor strategy does), the
consumer maps it, reads its first and last byte, unmaps, closes and acks.
Prints 'handoffs/s <rate>'.
"""
import mmap
import multiprocessing as mp
import os
import sys
import time
from multiprocessing import reduction

SIZE, POOL = 4096, 64


def consumer(conn, other):
    other.close()  # the producer's end, inherited: else no end of file comes
    sink = 0
    while True:
        try:
            fd = reduction.recv_handle(conn)
        except (EOFError, OSError):
            break
        with mmap.mmap(fd, SIZE, mmap.MAP_SHARED, mmap.PROT_READ) as m:
            sink += m[0] + m[SIZE - 1]
        os.close(fd)
        conn.send_bytes(b"k")
    conn.close()


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 0.3
    fds = []
    for i in range(POOL):
        fd = os.memfd_create(f"mp-{i}")
        os.ftruncate(fd, SIZE)
        os.pwrite(fd, b"\x5a" * SIZE, 0)
        fds.append(fd)
    ours, theirs = mp.Pipe()
    p = mp.get_context("fork").Process(target=consumer, args=(theirs, ours))
    p.start()
    theirs.close()
    done, start = 0, time.monotonic()
    t = start
    while t - start < seconds:
        reduction.send_handle(ours, fds[done % POOL], p.pid)
        ours.recv_bytes()
        done += 1
        t = time.monotonic()
    ours.close()
    p.join()
    print(f"handoffs/s {done / (t - start):.0f}")


if __name__ == "__main__":
    main()
