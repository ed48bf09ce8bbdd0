"""hurray-inspect on input it must not fall over on (issue 22): past the
input cap, streams that never end, floods of diagnostics, control bytes,
and too little memory. Usage: inspect_limits.py HURRAY_INSPECT CASE."""
import json
import resource
import subprocess
import sys

EXE, CASE = sys.argv[1], sys.argv[2]
MIB = 1 << 20


def run(args, stdin=b"", limit_as=None):
    def cap():
        if limit_as:
            resource.setrlimit(resource.RLIMIT_AS, (limit_as, limit_as))
    p = subprocess.run([EXE] + args, input=stdin, capture_output=True, timeout=300,
                       preexec_fn=cap if limit_as else None)
    return p.returncode, p.stdout.decode("latin-1"), p.stderr.decode("latin-1")


def expect(cond, what, out=""):
    if not cond:
        print("FAIL:", what, "\n", out[-2000:])
        sys.exit(1)
    print("ok:", what)


if CASE == "cap":
    rc, out, err = run(["-"], b"\0" * (MIB + 16))
    expect(rc == 2 and "input limit of 1048576 bytes" in err and "--max-input" in err,
           "1 MiB + 16 zero bytes: exit 2 naming the limit and --max-input", err)
    rc, out, err = run(["-"], b"\0" * MIB)
    expect(rc == 1, "exactly 1 MiB is read (invalid handles: exit 1)", err)
    rc, out, err = run(["/dev/zero"])
    expect(rc == 2 and "input limit" in err, "/dev/zero: exit 2, not out of memory", err)
    rc, out, err = run(["--hex", "-"], b"00" * (3 * MIB))
    expect(rc == 2 and "input limit" in err, "3 MiB of hex text on stdin: exit 2", err)
    rc, out, err = run(["--max-input", "4M", "-"], b"\0" * (2 * MIB))
    expect(rc == 1, "--max-input 4M takes 2 MiB", err)
    rc, out, err = run(["--max-input", "4X", "-"], b"")
    expect(rc == 2 and "not a size" in err, "--max-input 4X is a usage error", err)
elif CASE == "diagnostics":
    n = 64 * 1024  # 64 Ki zero handles: several errors each
    rc, out, err = run(["--max-input", "2M", "-"], b"\0" * (16 * n))
    lines = out.count("\n")
    expect(rc == 1 and "more not shown" in out, "the diagnostics past the cap are counted", out)
    expect(lines < 8 * n + 1000 + 10, "at most 1000 diagnostics printed (%d lines)" % lines)
    expect("result: INVALID (" in out and "errors" in out, "the totals are printed", out)
    rc, out, err = run(["--json", "--max-diagnostics", "5", "-"], b"\0" * 1024)
    j = json.loads(out)
    expect(len(j["errors"]) + len(j["warnings"]) == 5 and j["truncated"] is True and
           j["errors_total"] > 5, "--json: 5 kept, truncated, errors_total counts all", out)
elif CASE == "escapes":
    rc, out, err = run(["--frob\x1b[31mnicate"])
    expect(rc == 2 and "\\x1b[31m" in err and "\x1b" not in err,
           "an unknown option's control bytes are escaped", err)
    rc, out, err = run(["--hex", "00\x07"])
    expect(rc == 2 and "'\\x07'" in err and "\x07" not in err,
           "a non-hex control byte is escaped", err)
    rc, out, err = run(["/nonexistent/\x1b]0;title\x07"])
    expect(rc == 2 and "\x1b" not in err and "\x07" not in err,
           "a file name's control bytes are escaped", err)
elif CASE == "oom":
    # 64 MiB of address space, a 1 GiB cap: reading /dev/zero runs out of
    # memory. It must say so and exit 2, not abort (134) on std::bad_alloc.
    rc, out, err = run(["--max-input", "1G", "/dev/zero"], limit_as=64 * MIB)
    expect(rc == 2 and "out of memory" in err, "bad_alloc: exit 2 with a message (rc %d)" % rc,
           err)
else:
    sys.exit("unknown case " + CASE)
