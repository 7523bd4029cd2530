"""The one exception type of lmzip, with subclasses for the cases callers tell apart."""


class LmzipError(Exception):
    """Any failure lmzip reports to a user: the message is one line, fit to print."""


class FormatError(LmzipError):
    """Not an .lmz file, or a header that fails its checks (corrupt, truncated, unknown version)."""


class ModelNotFound(LmzipError):
    """The model a file names is not available here."""


class IntegrityError(LmzipError):
    """The decoded bytes do not match the checksum of the original."""
