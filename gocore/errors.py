"""`GozeroError`: the root of every error a user can act on (a bad file, move, model, option).

The CLI prints a `GozeroError` as one line and lets any other exception show its traceback, since
that is a bug. This module imports nothing, so storage (which otherwise never imports gocore) may
derive its errors from it too.
"""


class GozeroError(Exception):
    """An error with a reason a user can act on; `str(error)` is that reason."""
