"""GitHub Actions workflow commands read back as the runner reads them."""

from __future__ import annotations

import re

COMMAND = re.compile(r"::(?P<name>[a-z]+)(?: (?P<properties>[^:]*))?::(?P<message>.*)")


def unescape_data(text: str) -> str:
    """As the runner reads a command's message (the reverse of the toolkit's escapeData)."""
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def unescape_property(text: str) -> str:
    return unescape_data(text.replace("%3A", ":").replace("%2C", ","))


def parsed(lines: list[str]) -> list[tuple[str, dict[str, str], str]]:
    """Each line as (command, properties, message), as the runner reads it; a line that is no command fails."""
    commands = []
    for line in lines:
        match = COMMAND.fullmatch(line)
        assert match, line
        pairs = (item.split("=", 1) for item in (match["properties"] or "").split(",") if item)
        properties = {key: unescape_property(value) for key, value in pairs}
        commands.append((match["name"], properties, unescape_data(match["message"])))
    return commands
