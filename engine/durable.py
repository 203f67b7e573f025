"""Durable writes: every file the program writes (scenes, trajectories, bench JSON, pictures,
thumbnails, recent files, the desktop entry) goes through `open_for_write` / `write_file`.

    temp file from mkstemp in the target's folder  (unpredictable name, O_EXCL: a planted
                                                    symlink is never followed)
    write, flush, fsync; chmod to the old file's mode (new files: 0666 & ~umask)
    os.replace(temp, target); fsync of the folder

Writing through a symlink writes the link's target and keeps the link. A failure leaves the
old file as it was and names the user's path and the reason, never the temp file. A temp file
left by a killed process (its name carries the writer's pid) is removed at the next write of
the same file.
"""
import contextlib
import errno
import os
import re
import stat
import tempfile

TAG = ".impulse-tmp"


def _umask():
    old = os.umask(0)
    os.umask(old)
    return old


_NEW_MODE = 0o666 & ~_umask()


class WriteError(OSError):
    """A file could not be written; str() is one line naming the user's path."""

    def __init__(self, path, reason):
        super().__init__(f"cannot write {path}: {reason}")
        self.path, self.reason = str(path), reason

    def __str__(self):
        return self.args[0]


def _reason(e, folder):
    if e.errno == errno.ENOENT:
        return f"folder {folder} does not exist"
    if e.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"no permission to write in folder {folder}"
    if e.errno == errno.ENOSPC:
        return "no space left on the device"
    if e.errno == errno.ENOTDIR:
        return f"{folder} is not a folder"
    return e.strerror or str(e)


def target_of(path):
    """The file a write of `path` replaces: a symlink's final target, else the path itself."""
    p = os.path.abspath(os.fspath(path))
    return os.path.realpath(p) if os.path.islink(p) else p


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale(target):
    """Delete temp files of `target` whose writing process is gone."""
    folder, name = os.path.split(target)
    pattern = re.compile(re.escape(f".{name}.") + r"(\d+)\.[^.]+" + re.escape(TAG) + "$")
    try:
        entries = os.listdir(folder)
    except OSError:
        return
    for entry in entries:
        m = pattern.match(entry)
        if m and not _pid_alive(int(m.group(1))):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(folder, entry))


@contextlib.contextmanager
def open_for_write(path, binary=False, newline=None, encoding="utf-8"):
    """Context manager yielding a file object; the target is replaced only when the block
    ends without an exception. Raises WriteError (an OSError) with a one-line message."""
    check_writable(path)
    target = target_of(path)
    folder, name = os.path.split(target)
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        mode = _NEW_MODE
    remove_stale(target)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.{os.getpid()}.", suffix=TAG, dir=folder)
    except OSError as e:
        raise WriteError(path, _reason(e, folder)) from None
    try:
        with os.fdopen(fd, "wb" if binary else "w", newline=newline,
                       encoding=None if binary else encoding) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
        _fsync_folder(folder)
    except OSError as e:
        _unlink(tmp)
        if isinstance(e, WriteError):
            raise
        raise WriteError(path, _reason(e, folder)) from None
    except BaseException:
        _unlink(tmp)
        raise


def check_writable(path):
    """Raise WriteError now if `path` cannot be written later (before a long run)."""
    target = target_of(path)
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        raise WriteError(path, f"folder {folder} does not exist")
    if os.path.isdir(target):
        raise WriteError(path, "it is a folder")
    if not os.access(folder, os.W_OK):
        raise WriteError(path, f"no permission to write in folder {folder}")


def write_file(path, data, encoding="utf-8"):
    """Write `data` (str or bytes) to `path` durably; see open_for_write."""
    binary = isinstance(data, (bytes, bytearray, memoryview))
    with open_for_write(path, binary=binary, encoding=encoding) as f:
        f.write(data)


def _unlink(p):
    with contextlib.suppress(OSError):
        os.unlink(p)


def _fsync_folder(folder):
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
