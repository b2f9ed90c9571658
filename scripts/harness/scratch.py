"""Temporary directories that are removed however the script ends."""
import tempfile


def scratch(name):
    """A new directory `booksync-NAME-…` under $TMPDIR, as a context manager that
    yields its path and removes it (and everything in it) at the end."""
    return tempfile.TemporaryDirectory(prefix="booksync-%s-" % name, ignore_cleanup_errors=True)
