"""The stand-in for `python -m pytest ARGS` when a run goes to a warm worker.

    python -m zlbench.worker_client SOCKET ARGS...

zlb run starts this exactly where it would start pytest (same environment,
working directory and output pipe, same process group and signals); it hands
all of that to the worker listening on SOCKET (worker.py) and exits with the
exit code pytest returned there. It imports nothing heavy: its own start is
what a job costs beyond the worker's.

Signals are the run's escalation (SIGINT, then SIGTERM, then SIGKILL): SIGINT
and SIGTERM are passed on to the worker, whose pytest reacts as it would in a
process of its own; a SIGKILL of this process is seen by the worker as the
connection closing, and the worker ends too.

Exit codes of its own: 70 the worker refused the job (the sentence is on
stderr), 71 the worker could not be reached, 72 the worker ended during the
job without answering (it was killed, or crashed with the job).
"""

import array
import json
import os
import signal
import socket
import sys
import time

PROTOCOL_VERSION = 1
EXIT_REFUSED = 70
EXIT_UNREACHABLE = 71
EXIT_WORKER_DIED = 72
CONNECT_TRIES_S = 30.0
REFUSED_TRIES_S = 1.0


def _say(msg):
    sys.stderr.write("zlbench.worker_client: %s\n" % msg)
    sys.stderr.flush()


def _connect(path):
    """Connect to the worker's socket, waiting for a worker still starting.

    The batch removes the socket file before it starts a worker, which binds
    it within a Python start: no file yet is a worker on its way (up to
    CONNECT_TRIES_S). A file that refuses is one whose worker bound it and
    has ended (between its bind and listen for microseconds at most): after
    REFUSED_TRIES_S it is reported, not waited out.
    """
    start = time.monotonic()
    refused_since = None
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(path)
            return s
        except (FileNotFoundError, ConnectionRefusedError) as e:
            s.close()
            now = time.monotonic()
            if isinstance(e, ConnectionRefusedError):
                refused_since = refused_since if refused_since is not None else now
                if now - refused_since >= REFUSED_TRIES_S:
                    raise e
            else:
                refused_since = None
            if now - start >= CONNECT_TRIES_S:
                raise e
            time.sleep(0.02)


def _lines(sock):
    buf = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            if buf.strip():
                yield buf
            return
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            yield line


def main(argv):
    if len(argv) < 2:
        _say("usage: python -m zlbench.worker_client SOCKET PYTEST-ARGS...")
        return 2
    try:
        sock = _connect(argv[1])
    except OSError as e:
        _say("cannot reach the worker at %s: %s" % (argv[1], e))
        return EXIT_UNREACHABLE
    req = {"v": PROTOCOL_VERSION, "argv": argv[2:], "env": dict(os.environ),
           "cwd": os.getcwd()}
    data = (json.dumps(req) + "\n").encode("utf-8")
    sys.stdout.flush()
    # The output descriptors travel with the first part of the request.
    fds = array.array("i", [1, 2]).tobytes()
    sock.sendmsg([data[:65536]], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
    if len(data) > 65536:
        sock.sendall(data[65536:])

    worker_pid = [None]

    def forward(sig, _frame):
        if worker_pid[0]:
            try:
                os.kill(worker_pid[0], sig)
            except OSError:
                pass
        elif sig == signal.SIGTERM:
            os._exit(128 + sig)

    signal.signal(signal.SIGINT, forward)
    signal.signal(signal.SIGTERM, forward)
    for line in _lines(sock):
        try:
            msg = json.loads(line.decode("utf-8"))
        except ValueError:
            continue
        if msg.get("refused"):
            _say("the worker refused this run: %s" % msg["refused"])
            return EXIT_REFUSED
        if msg.get("started"):
            worker_pid[0] = msg.get("pid")
            sys.stderr.write("zlbench.worker_client: job %s of worker pid %s\n"
                             % (msg.get("job"), msg.get("pid")))
            sys.stderr.flush()
            continue
        if "rc" in msg:
            return int(msg["rc"])
    status = _end_of(worker_pid[0])
    if status is not None and os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        _say("the worker (pid %s) was killed by %s during this run" % (
            worker_pid[0], signal.Signals(sig).name if sig in signal.valid_signals() else sig))
        # End as pytest's own process would have: by the same signal.
        sys.stdout.flush()
        sys.stderr.flush()
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    _say("the worker (pid %s) ended during this run without an answer" % worker_pid[0])
    if status is not None and os.WIFEXITED(status):
        return os.WEXITSTATUS(status) or EXIT_WORKER_DIED
    return EXIT_WORKER_DIED


def _end_of(pid, wait_s=2.0):
    """The wait status of a worker that has ended and is not yet reaped.

    The worker is the batch's child, so only the batch can wait for it; until
    it does, /proc/<pid>/stat shows it as a zombie with its wait status
    (field 52, Linux 3.5+). None when that cannot be read in wait_s.
    """
    if not pid:
        return None
    deadline = time.monotonic() + wait_s
    while True:
        try:
            with open("/proc/%d/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if fields[0] == "Z" and len(fields) >= 50:
                return int(fields[49])
        except (OSError, IndexError, ValueError):
            return None
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.01)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
