"""The one Jinja2 environment factory: its variants, and no other place making an environment."""

from __future__ import annotations

from pathlib import Path

import jinja2
import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

from rag_compare.core.templates import template_environment

PACKAGE = Path(__file__).resolve().parents[2] / "rag_compare"


def test_a_missing_variable_is_an_error_and_templates_load_from_the_folder(tmp_path: Path) -> None:
    (tmp_path / "hello.j2").write_text("{% if true %}\n  hi {{ name | shout }}\n{% endif %}\n")
    plain = template_environment(tmp_path, filters={"shout": str.upper})
    assert plain.get_template("hello.j2").render(name="ann") == "\n  hi ANN\n"
    trimmed = template_environment(tmp_path, trim_blocks=True, keep_trailing_newline=True, filters={"shout": str.upper})
    assert trimmed.get_template("hello.j2").render(name="ann") == "  hi ANN\n"
    with pytest.raises(jinja2.UndefinedError):
        template_environment().from_string("{{ name }}").render()


def test_html_is_escaped_and_a_finalize_sees_every_value() -> None:
    assert template_environment(autoescape=True).from_string("{{ x }}").render(x="<b>") == "&lt;b&gt;"
    assert template_environment().from_string("{{ x }}").render(x="<b>") == "<b>"
    assert template_environment(finalize=repr).from_string("{{ x }}").render(x="a") == "'a'"


def test_a_users_template_runs_in_the_sandbox() -> None:
    environment = template_environment(sandboxed=True)
    assert isinstance(environment, ImmutableSandboxedEnvironment)
    assert environment.loader is None
    with pytest.raises(SecurityError):
        environment.from_string("{{ items.append(1) }}").render(items=[])


def test_no_module_but_the_factory_makes_a_jinja_environment() -> None:
    makers = ("jinja2.Environment(", "SandboxedEnvironment(", "jinja2.FileSystemLoader(", "PackageLoader(")
    found = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if path.name != "templates.py" and any(maker in path.read_text(encoding="utf-8") for maker in makers)
    ]
    assert found == []
