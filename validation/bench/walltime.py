#!/usr/bin/env python3
"""Times one command from right before its fork to right after its exit.

    walltime.py RESULT TIMEOUT_S CMD [ARGS...]

Writes RESULT as JSON: `wall_s` (monotonic clock, s) and `rc` (the exit status; -N for signal
N, `null` after a timeout). The command runs in a session of its own; after TIMEOUT_S seconds
the session gets SIGTERM, 5 s later SIGKILL (as `timeout -k 5`). The command's stdout and
stderr are this script's. Peak RSS and CPU time come from `/usr/bin/time` as the command's
first word (`scaling.py`): a resource usage read here would count this interpreter's forked
copy (14 MB) as the command's peak.

Why not `/usr/bin/time` under `timeout` and a clock around the whole shell: that clock also
counted bash, `priority.sh`'s `timed` (setsid, nice), `/usr/bin/time` and `timeout` starting,
about 9 ms per run on the 2-core VM of `validation/calibration/vm` (median of 15 runs of
`true`), 7 % of a 0.13 s replay and 0.4 % of SimGrid's 2.5 s on the same trace. Here the
clock starts after this interpreter has started and stops when the command is reaped; what
remains a fork and exec of `/usr/bin/time` and of the command (`true` timed this way: about
1.5 ms).
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time


def main():
    if len(sys.argv) < 4:
        print("usage: walltime.py RESULT TIMEOUT_S CMD [ARGS...]", file=sys.stderr)
        sys.exit(2)
    result, timeout_s, cmd = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
    t0 = time.perf_counter()
    try:
        p = subprocess.Popen(cmd, start_new_session=True)
    except OSError as e:
        print(f"walltime.py: cannot run {cmd[0]}: {e}", file=sys.stderr)
        sys.exit(127)
    timed_out = threading.Event()

    def stop():
        # The deadline passed: SIGTERM to the command's session, SIGKILL 5 s later.
        timed_out.set()
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                return
            time.sleep(5)

    # A sleeping timer thread, not polling: the measured command keeps both cores.
    timer = threading.Timer(timeout_s, stop)
    timer.daemon = True
    timer.start()
    _, status = os.waitpid(p.pid, 0)
    wall = time.perf_counter() - t0
    timer.cancel()
    timed_out = timed_out.is_set()
    rc = None if timed_out else os.waitstatus_to_exitcode(status)
    with open(result, "w") as f:
        json.dump({"wall_s": wall, "rc": rc}, f)
    sys.exit(124 if timed_out else (rc if rc is not None and rc >= 0 else 1))


if __name__ == "__main__":
    main()
