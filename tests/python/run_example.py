"""Runs api/python/example.py after checking that docs/embedding.md shows
it verbatim (the documented example is the one CI runs)."""
import pathlib
import runpy
import sys

src = pathlib.Path(sys.argv[1])
code = (src / "api" / "python" / "example.py").read_text()
if code not in (src / "docs" / "embedding.md").read_text():
    sys.exit("docs/embedding.md does not show api/python/example.py as it is")
runpy.run_path(str(src / "api" / "python" / "example.py"), run_name="__main__")
