"""zlbench.worker_client reaching its worker: a socket file with nobody
listening is a worker that has ended, reported after a second, not waited on
for the half minute a starting worker is given."""
import os
import socket
import subprocess
import sys
import threading
import time

from conftest import PYDIR


def client(path, timeout=60):
    env = dict(os.environ, PYTHONPATH=PYDIR)
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "zlbench.worker_client", str(path), "-q"],
                       env=env, capture_output=True, text=True, timeout=timeout)
    return r, time.monotonic() - t0


def test_a_socket_nobody_listens_on_is_reported_at_once(tmp_path):
    path = tmp_path / "lane0.sock"
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()                 # bound, never listening: its worker has ended
    r, took = client(path)
    assert r.returncode == 71, r
    assert "cannot reach the worker" in r.stderr and "refused" in r.stderr, r.stderr
    assert took < 15, took       # CONNECT_TRIES_S is 30


def test_a_worker_still_starting_is_waited_for(tmp_path):
    path = tmp_path / "lane0.sock"
    got = []

    def late_worker():
        time.sleep(1.5)          # longer than a dead socket is given
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(str(path))
        srv.listen(1)
        conn, _ = srv.accept()
        got.append(conn.recv(65536))
        conn.sendall(b'{"rc": 5}\n')
        conn.close()
        srv.close()

    t = threading.Thread(target=late_worker)
    t.start()
    r, _ = client(path)
    t.join()
    assert r.returncode == 5, r
    assert got and b'"argv": ["-q"]' in got[0]
