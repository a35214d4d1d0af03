// SWE-bench runs a row's pre_install in the checkout (/testbed) before the install; some of those commands edit the
// repository's files (pytest 6.3's setup.cfg, astropy's pyproject.toml, sphinx's tox.ini), others the system
// (apt-get, locales). The repository's edits run in the checkout with the install; the rest builds the image.
import { describe, expect, it } from 'vitest';
import { editsRepository, specFor } from '../../swe-env/specs.ts';

describe('pre_install: the repository\'s edits in the checkout, the system\'s in the image', () => {
  it('tells the two apart', () => {
    expect(editsRepository("sed -i 's/>=>=/>=/' setup.cfg")).toBe(true);
    expect(editsRepository("sed -i 's/requires = \\[\"setuptools\",/requires = \\[\"setuptools==68.0.0\",/' pyproject.toml")).toBe(true);
    expect(editsRepository("sed -i 's/pytest/pytest -rA/' tox.ini")).toBe(true);
    expect(editsRepository('apt-get update && apt-get install -y locales')).toBe(false);
    expect(editsRepository("echo 'en_US UTF-8' > /etc/locale.gen")).toBe(false);
    expect(editsRepository("sed -i 's/a/b/' /etc/locale.gen")).toBe(false);
  });

  it('the shipped rows: pytest 6.3 edits setup.cfg before its install; a system pre_install is not in the install', () => {
    expect(specFor('pytest-dev/pytest', '6.3')!.install).toEqual(["sed -i 's/>=>=/>=/' setup.cfg", 'python -m pip install -e .']);
    expect(specFor('pytest-dev/pytest', '5.4')!.install).toEqual(['python -m pip install -e .']);
    for (const cmd of specFor('django/django', '2.2')!.install) expect(cmd).not.toMatch(/apt-get|locale/);
    expect(specFor('sphinx-doc/sphinx', '1.5')!.install[0]).toBe("sed -i 's/pytest/pytest -rA/' tox.ini");
  });
});
