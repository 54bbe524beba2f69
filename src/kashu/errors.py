"""The one exception a user can fix. Adapters turn it into exit code 2 (CLI) or HTTP 422 (web)."""

from __future__ import annotations


class KashuError(ValueError):
    """A problem with the user's input, with a message meant for a person (English and Chinese).

    `field` names the input that is wrong (a CLI option or API field name) when there is one.
    """

    def __init__(self, message: str, zh: str | None = None, field: str | None = None):
        super().__init__(message)
        self.message = message
        self.zh = zh or message
        self.field = field

    def text(self, lang: str = "en") -> str:
        return self.zh if lang == "zh" else self.message
