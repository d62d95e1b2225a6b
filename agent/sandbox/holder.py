"""The holder of the sandbox's network namespace (Linux): a script, run by `agent.sandbox.network`
as `python -I -S holder.py FD [--listen]` inside `bwrap --unshare-user --unshare-net`.

It is the namespace's first process: it tells earshot its pid over the socket `FD` (earshot then
runs every sandboxed command in its user and network namespaces, `nsenter --user=/proc/PID/ns/user
--net=/proc/PID/ns/net`), and with `--listen PORT` it first opens a TCP listener on the
namespace's own loopback (on PORT, else any free port) and hands it over with the pid
(SCM_RIGHTS): earshot's proxy accepts the commands' connections on it, so no process of ours has
to run inside to bridge them. Then it waits for earshot to go (end of file on `FD`, whichever way
earshot ends) and exits.

Standard library only, and nothing of earshot: it runs with `-I -S` (no site, no user paths).
"""

from __future__ import annotations

import array
import os
import socket
import sys


def main(argv: list[str]) -> int:
    channel = socket.socket(fileno=int(argv[1]))
    listener: socket.socket | None = None
    descriptors: list[int] = []
    if argv[2:3] == ["--listen"]:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            listener.bind(("127.0.0.1", int(argv[3])))
        except OSError:
            listener.bind(("127.0.0.1", 0))
        listener.listen(512)
        descriptors.append(listener.fileno())
    ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", descriptors))]
    channel.sendmsg([str(os.getpid()).encode()], ancillary if descriptors else [])
    if listener is not None:
        listener.close()  # earshot holds it now
    while channel.recv(64):
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
