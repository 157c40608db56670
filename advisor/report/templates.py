"""Where the report templates are (text, Markdown and HTML: jinja2, rendered by render.py), and the cache of their
compiled code.

The compiled code is kept in ``templates/`` under advisor's cache folder (rulebase/cache.py), one file per
template: a header line (this format, jinja's and Python's versions), the SHA-1 of the template's source as jinja
computes it, an HMAC-SHA256 of the three with this user's key (``signing.key``, 0600, beside them), then the code
as ``marshal`` writes it. Code is what the cache holds, so a file is loaded only when

- it and its folder are this user's alone (owner, no write access for others, no symbolic link: as jinja's own
  ``FileSystemBytecodeCache`` checks its folder), read without following a link or blocking on a FIFO;
- its header and source checksum are this version's and this template's;
- its HMAC is the one this user's key gives: a file advisor did not write (planted in a cache folder that an
  archive or another tool filled, even one owned by this user) is never run;
- ``marshal`` gives back a code object.

Otherwise the template is compiled from source and the file written again; no error of the cache reaches the
report (jinja's own ``FileSystemBytecodeCache`` unpickles its checksum and checks nothing of the file).
"""

from __future__ import annotations

import hashlib
import hmac
import marshal
import sys
import types
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jinja2 import BytecodeCache

#: the layout of a cached template's file; a file of another format is compiled again
TEMPLATE_CACHE_FORMAT = 2
#: a compiled template's file larger than this is not read (the HTML report's is about 200 kB)
MAX_TEMPLATE_CODE_BYTES = 16 * 1024 * 1024


def templates_dir() -> Path:
    """The report templates: inside the installed package, or templates/ of a checkout."""
    here = Path(__file__).resolve().parent.parent  # advisor/
    for candidate in (here / "templates", here.parent / "templates"):
        if candidate.is_dir():
            return candidate
    return here / "templates"


def _header() -> bytes:
    import jinja2

    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    return f"advisor-template {TEMPLATE_CACHE_FORMAT} jinja {jinja2.__version__} python {version}".encode()


def seal(key: bytes, header: bytes, checksum: str, code: types.CodeType) -> bytes:
    """A cache file's bytes: header, checksum and HMAC lines, then the marshalled code."""
    body = marshal.dumps(code)
    mac = hmac.new(key, b"\n".join([header, checksum.encode(), body]), hashlib.sha256).hexdigest()
    return b"\n".join([header, checksum.encode(), mac.encode(), body])


def unseal(key: bytes, header: bytes, checksum: str, data: bytes) -> types.CodeType | None:
    """The code of a cache file's bytes when they are this version's, this template's and signed with ``key``;
    None otherwise (a damaged, outdated, foreign or planted file)."""
    parts = data.split(b"\n", 3)
    if len(parts) != 4 or parts[0] != header or parts[1] != checksum.encode():
        return None
    want = hmac.new(key, b"\n".join([header, parts[1], parts[3]]), hashlib.sha256).hexdigest().encode()
    if not hmac.compare_digest(parts[2], want):
        return None
    try:
        code = marshal.loads(parts[3])
    except (ValueError, EOFError, TypeError):
        return None
    return code if isinstance(code, types.CodeType) else None


def template_code_cache() -> BytecodeCache | None:
    """The cache of compiled templates for jinja's ``Environment(bytecode_cache=...)``; None when the cache is
    off, its folder is not this user's alone, or no signing key can be read or made."""
    from advisor.rulebase.cache import usable_cache_dir, user_key

    folder = usable_cache_dir("templates")
    if folder is None:
        return None
    key = user_key(folder)
    if key is None:
        return None
    return _signed_cache(folder, key, _header())


def _signed_cache(folder: Path, key: bytes, header: bytes) -> BytecodeCache:
    from jinja2 import BytecodeCache

    from advisor.rulebase.cache import read_trusted, write_private

    class TemplateCodeCache(BytecodeCache):
        def _path(self, bucket: Any) -> Path:
            return folder / f"{bucket.key}.code"

        def load_bytecode(self, bucket: Any) -> None:
            data = read_trusted(self._path(bucket), MAX_TEMPLATE_CODE_BYTES)
            code = unseal(key, header, bucket.checksum, data) if data is not None else None
            if code is None:
                bucket.reset()  # compiled from source, then written again
            else:
                bucket.code = code

        def dump_bytecode(self, bucket: Any) -> None:
            try:
                write_private(self._path(bucket), seal(key, header, bucket.checksum, bucket.code))
            except (OSError, ValueError):  # a cache that cannot be written: compiled again next time
                pass

    return TemplateCodeCache()
