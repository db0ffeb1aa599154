"""Takes every inotify instance its user may have, then runs the command it is given in its place.

Linux counts inotify instances per user (fs.inotify.max_user_instances), so run this as a user of
its own (a uid nothing else on the machine uses): the limit is then reached for that user only, and
released when the command exits. The instances are inherited across exec, so the command starts
with none left to take: its first `fs.watch` fails with EMFILE.
"""
import ctypes
import os
import sys

libc = ctypes.CDLL(None, use_errno=True)
held = 0
while held < 1_000_000:
    if libc.inotify_init() < 0:
        break
    held += 1
error = ctypes.get_errno()
if error != 24:
    sys.exit(f"exhaust-inotify: stopped after {held} instances with errno {error}, not EMFILE")
os.environ["INOTIFY_INSTANCES_HELD"] = str(held)
os.execvp(sys.argv[1], sys.argv[1:])
