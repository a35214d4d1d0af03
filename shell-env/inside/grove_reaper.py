# One command of a pod-isolated shell sandbox (no namespaces, no cgroups of our own): this process becomes a child
# subreaper, so every descendant of the command -- double-forked daemons and setsid'd ones included -- stays in its
# tree instead of going to the pod's init. It runs the command with the given rlimits and reports the command's
# status on STATUS_FD as soon as it ends ("exit N" or "signal N"); it then stays while descendants live (background
# jobs keep running, as in a bubblewrap sandbox). SIGTERM/SIGINT/SIGHUP (the exec timed out, the sandbox closed, or
# the server died: PR_SET_PDEATHSIG) kill the whole tree with SIGKILL, then it exits.
#   grove_reaper.py STATUS_FD MAX_PROCESSES CPU_SECONDS MERGE_STDERR -- argv...
import ctypes
import os
import resource
import signal
import sys

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def descendants(root):
    """Pids whose parent chain leads to root (read from /proc, so it needs no kernel option)."""
    children = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # The command name may hold spaces and parentheses: the fields after its last ')' are fixed.
        fields = stat[stat.rfind(b")") + 2 :].split()
        children.setdefault(int(fields[1]), []).append(int(name))
    out, todo = [], [root]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def reap_all():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_tree(*_):
    # Orphans re-parent to us, so repeated passes converge even while something forks; RLIMIT_NPROC bounds it.
    me = os.getpid()
    for _ in range(1000):
        pids = descendants(me)
        if not pids:
            break
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        reap_all()
    os._exit(137)


def main():
    status_fd, nproc, cpu, merge = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
    argv = sys.argv[6:]
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    parent = int(os.environ.pop("GROVE_REAPER_PARENT", "0"))
    if parent and os.getppid() != parent:
        sys.exit(137)  # the server died before PR_SET_PDEATHSIG was in place
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, kill_tree)
    pid = os.fork()
    if pid == 0:
        os.close(status_fd)
        for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGPIPE):
            signal.signal(s, signal.SIG_DFL)
        libc.prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0)
        if merge:
            os.dup2(1, 2)
        if nproc > 0:
            resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        if cpu > 0:
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
        try:
            os.execvp(argv[0], argv)
        except OSError as e:
            os.write(2, f"grove: {argv[0]}: {e.strerror}\n".encode())
            os._exit(127 if isinstance(e, FileNotFoundError) else 126)
    # Only the command holds the streams: they close when it (and what it started with them) is done.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    os.closerange(3, status_fd)
    os.closerange(status_fd + 1, 256)
    while True:
        try:
            done, st = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if done == pid and status_fd >= 0:
            line = f"signal {os.WTERMSIG(st)}\n" if os.WIFSIGNALED(st) else f"exit {os.WEXITSTATUS(st)}\n"
            try:
                os.write(status_fd, line.encode())
                os.close(status_fd)
            except OSError:
                pass
            status_fd = -1
    sys.exit(0)


main()
