"""A catalog folder's report template renders in Jinja2's sandbox (issue 40): a template that
reaches Python's internals (``cycler.__init__.__globals__.os``) ran a shell command during
``resumebias run --config``; now it is refused, naming the file, and nothing runs."""

import pytest

from resumebias_dagster.core.reporting.render import ReportTemplateError, render_report
from tests.core.reporting.test_render import _tables

ESCAPES = [
    "{{ cycler.__init__.__globals__.os.system('touch {marker}') }}",
    "{{ joiner.__init__.__globals__['os'].popen('touch {marker}').read() }}",
    "{{ ''.__class__.__mro__[1].__subclasses__() }}{{ lipsum.__globals__.os.system('touch {marker}') }}",
]


@pytest.mark.parametrize("template", ESCAPES)
def test_a_catalog_template_that_reaches_python_is_refused_and_runs_nothing(tmp_path, template):
    marker = tmp_path / "ran"
    folder = tmp_path / "catalog" / "report"
    folder.mkdir(parents=True)
    file = folder / "audit_report.html.j2"
    file.write_text("<html>" + template.replace("{marker}", str(marker)) + "</html>", encoding="utf-8")
    with pytest.raises(ReportTemplateError) as exc:
        render_report(_tables(), catalog_dir=tmp_path / "catalog")
    assert str(exc.value).startswith(f"report template {file}: it reaches outside the sandbox")
    assert "\n" not in str(exc.value)
    assert not marker.exists()


def test_a_catalog_template_that_does_not_render_is_named(tmp_path):
    folder = tmp_path / "catalog" / "report"
    folder.mkdir(parents=True)
    (folder / "audit_report.html.j2").write_text("<html>{{ no_such_value }}</html>", encoding="utf-8")
    with pytest.raises(ReportTemplateError, match="audit_report.html.j2: it does not render: 'no_such_value'"):
        render_report(_tables(), catalog_dir=tmp_path / "catalog")


def test_a_harmless_catalog_template_still_renders(tmp_path):
    folder = tmp_path / "catalog" / "report"
    folder.mkdir(parents=True)
    (folder / "audit_report.html.j2").write_text(
        "<html>{% for m in models %}{{ m | upper }}{% endfor %}{{ verdicts | length }}</html>", encoding="utf-8"
    )
    assert render_report(_tables(), catalog_dir=tmp_path / "catalog").startswith("<html>")
