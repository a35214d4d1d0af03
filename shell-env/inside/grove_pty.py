# Runs inside a shell sandbox: starts argv on a new pseudo-terminal and relays it. stdin → terminal input,
# terminal output → stdout; fd 3 carries control lines ("resize ROWS COLS", "signal NAME"). Exits with the command's status.
import fcntl
import os
import pty
import select
import signal
import struct
import sys
import termios


def set_size(fd, rows, cols):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


def main():
    rows, cols = int(sys.argv[1]), int(sys.argv[2])
    argv = sys.argv[3:]
    pid, master = pty.fork()
    if pid == 0:
        os.execvp(argv[0], argv)
    set_size(master, rows, cols)
    os.kill(pid, signal.SIGWINCH)
    control = 3
    watched = [master, 0, control]
    ctl_buf = b""
    while True:
        try:
            readable, _, _ = select.select(watched, [], [])
        except InterruptedError:
            continue
        if master in readable:
            try:
                data = os.read(master, 65536)
            except OSError:
                data = b""
            if not data:
                break
            os.write(1, data)
        if 0 in readable:
            data = os.read(0, 65536)
            if data:
                os.write(master, data)
            else:
                watched.remove(0)
        if control in readable:
            data = os.read(control, 4096)
            if not data:
                watched.remove(control)
            ctl_buf += data
            while b"\n" in ctl_buf:
                line, ctl_buf = ctl_buf.split(b"\n", 1)
                parts = line.split()
                if len(parts) == 3 and parts[0] == b"resize":
                    set_size(master, int(parts[1]), int(parts[2]))
                    os.kill(pid, signal.SIGWINCH)
                elif len(parts) == 2 and parts[0] == b"signal":
                    sig = getattr(signal, "SIG" + parts[1].decode().upper().removeprefix("SIG"), None)
                    if isinstance(sig, signal.Signals):
                        try:
                            os.killpg(pid, sig)
                        except ProcessLookupError:
                            pass
    _, status = os.waitpid(pid, 0)
    sys.exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))


main()
