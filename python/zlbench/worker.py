"""A warm worker: one Python process that runs many `zlb run`s' pytest sessions.

`zlb batch --isolation worker` starts one per device lane:

    python -m zlbench.worker SOCKET LOG_PREFIX

and every `zlb run --worker SOCKET` of that lane starts, instead of
`python -m pytest ARGS`, the small client `python -m zlbench.worker_client
SOCKET ARGS` (worker_client.py), which hands this process its pytest
arguments, environment, working directory and output descriptors and waits
for the exit code. What is paid once is what every operator paid before:
the interpreter, torch, triton, flag_gems and pytest's own start (on the
H200 about 12 s of a 16 s collect-only run; `import flag_gems` initialises
CUDA, so a fork server after it cannot work: a forked child cannot use the
parent's CUDA context).

Everything a run is measured under stays the run's own: zlb run builds the
run directory, identity, shapes and environment exactly as in a process of
its own; the plugin modules (zlbench.*) and the checkout's benchmark package
(conftest, base, test modules) are imported afresh for each job; Triton's compiled kernels, its autotuners'
choices and FlagGems' LibEntry dispatch caches are dropped between jobs
(_worker_reset.py), so each job compiles and tunes as a fresh process would.
What is shared is what a fresh process could not have: the CUDA context and
the allocator's history. That is why the isolation is caliber
(`isolation: worker`), and why zlb batch reruns in a fresh worker any job
that did not pass after an earlier one in the same worker.

Protocol (version 1), over a Unix stream socket in a private directory, one
job per connection, messages one JSON object per line (a connection closed
with nothing sent is a probe: zlb run learns the worker's pid from it by
SO_PEERCRED, so that the worker is not "another process" on its device):
  client -> worker  {"v": 1, "argv": [...], "env": {...}, "cwd": "..."}
                    with its stdout and stderr descriptors (SCM_RIGHTS)
  worker -> client  {"v": 1, "started": true, "pid": P, "job": N}
                    or {"v": 1, "refused": "sentence"}
  worker -> client  {"v": 1, "rc": R, "job": N[, "poisoned": "why"]}
A client that goes away while its job runs (killed by zlb run's timeout or
interrupt escalation) takes the worker with it: the job's state cannot be
trusted, and zlb batch starts a fresh worker for the next job.
"""

import array
import json
import os
import signal
import socket
import struct
import sys
import threading
import time
import traceback

PROTOCOL_VERSION = 1
MAX_REQUEST = 16 << 20

# Variables a job may set differently from the worker's first job: those read
# at use (zlb's own, by plugin modules imported per job; Triton's cache
# directory, read at each compile). Any other difference would mean a job
# measured under an environment that the already imported modules never saw.
PER_JOB_PREFIXES = ("ZLB_",)
PER_JOB_KEYS = frozenset(("TRITON_CACHE_DIR",))


def _log(prefix, msg):
    sys.__stderr__.write("%s: %s\n" % (prefix, msg))
    sys.__stderr__.flush()


def _recv_request(conn):
    """The request line and the two descriptors sent with it."""
    fds = array.array("i")
    data = b""
    while not data.endswith(b"\n"):
        msg, anc, _flags, _addr = conn.recvmsg(65536, socket.CMSG_SPACE(2 * fds.itemsize))
        for level, kind, payload in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(payload[:len(payload) - len(payload) % fds.itemsize])
        if not msg:
            break
        data += msg
        if len(data) > MAX_REQUEST:
            raise ValueError("request over %d bytes" % MAX_REQUEST)
    if not data and not fds:
        return None, []
    return json.loads(data.decode("utf-8")), list(fds)


def _send(conn, obj):
    conn.sendall((json.dumps(obj) + "\n").encode("utf-8"))


def _peer_is_us(conn):
    """Only a process of this user may hand this worker code to run."""
    try:
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        _pid, uid, _gid = struct.unpack("3i", creds)
        return uid == os.getuid()
    except OSError:
        return False


def env_difference(first, env):
    """The first variable that differs outside the per-job ones, or None."""
    keys = set(first) | set(env)
    for k in sorted(keys):
        if k.startswith(PER_JOB_PREFIXES) or k in PER_JOB_KEYS:
            continue
        if first.get(k) != env.get(k):
            return k
    return None


def _short(v):
    if v is None:
        return "unset"
    return repr(v if len(v) <= 80 else v[:77] + "...")


class Worker:
    def __init__(self, log_prefix):
        self.prefix = log_prefix
        self.jobs = 0
        self.first_env = None
        self.first_cwd = None
        self.active = 0          # the job under way, 0 between jobs
        from . import _worker_reset
        self.reset = _worker_reset.Reset()

    def refusal(self, req):
        if not isinstance(req, dict) or req.get("v") != PROTOCOL_VERSION:
            return "the client speaks another protocol version than this worker (%d)" % (
                PROTOCOL_VERSION)
        argv, env, cwd = req.get("argv"), req.get("env"), req.get("cwd")
        if not (isinstance(argv, list) and all(isinstance(a, str) for a in argv)
                and isinstance(env, dict) and isinstance(cwd, str)):
            return "malformed request (argv, env, cwd)"
        if self.first_env is None:
            return None
        if cwd != self.first_cwd:
            return ("this worker runs pytest in %s, the job asks for %s: one worker serves "
                    "one checkout" % (self.first_cwd, cwd))
        k = env_difference(self.first_env, env)
        if k:
            return ("the job's environment differs from the worker's in %s (worker: %s, job: "
                    "%s); modules already imported read it at import, so the job needs a "
                    "process of its own (zlb batch --isolation process)" % (
                        k, _short(self.first_env.get(k)), _short(env.get(k))))
        return None

    def watch(self, conn, job):
        """Kill this process if the client goes away while its job runs."""
        try:
            while conn.recv(1):
                pass
        except OSError:
            pass
        if self.active == job:
            os.kill(os.getpid(), signal.SIGKILL)

    def run_job(self, conn, req, fds):
        import pytest

        self.jobs += 1
        t0 = time.monotonic()
        if self.first_env is None:
            self.first_env = dict(req["env"])
            self.first_cwd = req["cwd"]
        os.environ.clear()
        os.environ.update(req["env"])
        os.chdir(req["cwd"])
        sys.argv = ["pytest"] + req["argv"]
        saved = (os.dup(1), os.dup(2))
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(fds[0], 1)
        os.dup2(fds[1] if len(fds) > 1 else fds[0], 2)
        for fd in fds:
            os.close(fd)
        self.active = self.jobs
        threading.Thread(target=self.watch, args=(conn, self.jobs), daemon=True).start()
        # The client forwards SIGINT to this process: pytest's KeyboardInterrupt.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        _send(conn, {"v": PROTOCOL_VERSION, "started": True, "pid": os.getpid(),
                     "job": self.jobs})
        rc = 1
        raised = None
        try:
            rc = int(pytest.main(req["argv"]))
        except KeyboardInterrupt:
            rc = 2
        except SystemExit as e:
            rc = 0 if e.code is None else e.code if isinstance(e.code, int) else 1
        except BaseException as e:  # a job's failure must reach its client
            # What `python -m pytest` gives when pytest itself raises (the
            # checkout removed under a session: its final chdir fails): the
            # traceback and exit 1, a failed run zlb batch tries again, and
            # the retry's preflight tells the environment from the operator.
            # The session did not end, so this process serves no other job.
            traceback.print_exc()
            sys.stderr.write("zlbench.worker: pytest raised %s: %s\n" % (type(e).__name__, e))
            raised = "pytest raised %s; its session did not end" % type(e).__name__
            rc = 1
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        t_job = time.monotonic() - t0
        poisoned = raised or self.reset.device_unusable() or self.reset.state_left()
        if poisoned:
            sys.stderr.write("zlbench.worker: this process cannot serve another job (%s); "
                             "the worker ends and the next job gets a fresh one\n" % poisoned)
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])
        reply = {"v": PROTOCOL_VERSION, "rc": rc, "job": self.jobs}
        if poisoned:
            reply["poisoned"] = poisoned
        self.active = 0
        _log(self.prefix, "job %d: pytest %.3f s, rc %d%s" % (
            self.jobs, t_job, rc, ", poisoned" if poisoned else ""))
        _send(conn, reply)
        return not poisoned

    def reset_after(self, job):
        """Undo job for the next one, right after its client has its exit
        code: while that zlb run writes its results and the batch starts the
        next, not while the next one's client waits. Nothing in the reset
        depends on the job to come. Logged with its steps: what the warm
        process costs a job."""
        t0 = time.monotonic()
        steps = self.reset.between_jobs()
        _log(self.prefix, "after job %d: reset %.3f s (%s)" % (
            job, time.monotonic() - t0, ", ".join("%s %.3f" % kv for kv in steps.items())))

    def serve(self, path):
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(path)
        srv.listen(4)
        self.reset.warm_up()
        _log(self.prefix, "pid %d listening on %s" % (os.getpid(), path))
        while True:
            conn, _ = srv.accept()
            keep = True
            with conn:
                if not _peer_is_us(conn):
                    _log(self.prefix, "refused a connection from another user")
                    continue
                try:
                    req, fds = _recv_request(conn)
                except (ValueError, OSError) as e:
                    _log(self.prefix, "unreadable request: %s" % e)
                    continue
                if req is None:
                    continue   # a probe: zlb run asking who listens (SO_PEERCRED)
                why = self.refusal(req)
                if why:
                    for fd in fds:
                        os.close(fd)
                    _send(conn, {"v": PROTOCOL_VERSION, "refused": why})
                    continue
                if not fds:
                    _send(conn, {"v": PROTOCOL_VERSION, "refused": "no output descriptors"})
                    continue
                keep = self.run_job(conn, req, fds)
                try:
                    conn.shutdown(socket.SHUT_RDWR)  # wakes the job's watcher
                except OSError:
                    pass
            if not keep:
                return 0
            self.reset_after(self.jobs)   # only a job that ran gets here


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: python -m zlbench.worker SOCKET LOG_PREFIX\n")
        return 2
    # The batch stops a worker with SIGTERM; between jobs nothing needs saving.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # A SIGINT is meant for a job (the client forwards it); between jobs it is late.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    return Worker(argv[2]).serve(argv[1])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
