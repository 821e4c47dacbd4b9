"""agent_fake_capture.py — stands in for a duty-cycled capture's control
socket where the library in this tree has no duty cycle yet: listens on
CTL/<its pid>.sock (mode 0600, in a 0700 directory) and answers `status` as
libgpuphase/window.c does for GPUPHASE_WINDOW=every=... ("ok idle ...", then
"windows dir=DIR last=SEQ"), SEQ read from the file LASTFILE each time (the
test moves it forward as it puts window files in DIR).

Usage: python3 agent_fake_capture.py CTL DIR LASTFILE SECONDS
Ends after SECONDS (a bound), or on SIGTERM; removes its socket.
"""
import os
import signal
import socket
import sys
import time

ctl, wdir, lastfile, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
path = os.path.join(ctl, "%d.sock" % os.getpid())
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
os.chmod(path, 0o600)
srv.listen(4)
srv.settimeout(0.2)
signal.signal(signal.SIGTERM, lambda *_: (os.unlink(path), sys.exit(0)))
end = time.monotonic() + seconds
try:
    while time.monotonic() < end:
        try:
            c, _ = srv.accept()
        except socket.timeout:
            continue
        with c:
            c.settimeout(1)
            try:
                line = c.recv(256).decode().strip()
            except OSError:
                continue
            try:
                with open(lastfile) as f:
                    last = int(f.read().strip() or 0)
            except (OSError, ValueError):
                last = 0
            if line == "status":
                reply = "ok idle iter=0 pid=%d marker=sync window=fixed\nwindows dir=%s last=%d\n" % (
                    os.getpid(), wdir, last)
            else:
                reply = "error only 'status' here\n"
            c.sendall(reply.encode())
finally:
    if os.path.exists(path):
        os.unlink(path)
