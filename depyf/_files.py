"""Reading files that may be hostile: only regular files, their size checked first.

`open()` on a FIFO blocks until a writer comes, and `read()` of /dev/zero or a
huge sparse file goes on until memory runs out.  Here the file is opened
without blocking, checked with fstat (regular file, size within the limit) and
only then read, never past the limit even if it grows meanwhile.
"""

import errno
import os
import stat

MAX_INPUT_SIZE = 256 * 1024 * 1024  # bytes; the core's longest function is 256 MiB of bytecode


class UnreadableFile(OSError):
    """The path is not a regular file, or is too large; str() is the reason."""


def _describe(mode):
    for test, what in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return what
    return "not a regular file"


def _raise_os_error(e):
    raise UnreadableFile(e.errno, e.strerror or str(e)) from None


class RegularFile:
    """An open regular file of at most `limit` bytes (a context manager).

    limit=None takes a file of any size (read(n) still reads at most n bytes).
    follow_symlinks=False refuses a symbolic link (O_NOFOLLOW): for files a
    program wrote itself, where a link can only be someone else's doing."""

    def __init__(self, path, limit=MAX_INPUT_SIZE, follow_symlinks=True):
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        if not follow_symlinks:
            flags |= getattr(os, "O_NOFOLLOW", 0)
        try:
            self.fd = os.open(path, flags)
        except OSError as e:
            if e.errno == errno.ELOOP and not follow_symlinks:
                raise UnreadableFile(e.errno, "a symbolic link") from None
            _raise_os_error(e)
        try:
            st = os.fstat(self.fd)
            if not stat.S_ISREG(st.st_mode):
                raise UnreadableFile(errno.EINVAL, _describe(st.st_mode))
            if limit is not None and st.st_size > limit:
                raise UnreadableFile(errno.EFBIG, "too large: %d bytes (depyf reads at most %d)"
                                     % (st.st_size, limit))
        except BaseException:
            os.close(self.fd)
            raise
        self.size = st.st_size
        self.limit = limit
        self.done = 0

    def read(self, n=None):
        """Up to `n` more bytes (all that is left if None), never past the limit in all."""
        left = float("inf") if self.limit is None else self.limit - self.done
        want = left if n is None else min(n, left)
        chunks = []
        try:
            while want > 0:
                chunk = os.read(self.fd, int(min(want, 1 << 20)))
                if not chunk:
                    break
                chunks.append(chunk)
                want -= len(chunk)
                self.done += len(chunk)
        except OSError as e:
            _raise_os_error(e)
        return b"".join(chunks)

    def close(self):
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def read_regular(path, limit=MAX_INPUT_SIZE, follow_symlinks=True):
    """The bytes of the regular file `path` (UnreadableFile, an OSError, otherwise)."""
    with RegularFile(path, limit, follow_symlinks) as f:
        return f.read()
