"""Man pages and shell completion generated from the real argument parsers.

`python -m stripewise.build_docs --man DIR --completions DIR` writes stripewise.1,
stripewise-helper.8, stripewise.bash and _stripewise. The package build runs it, so what it
installs says exactly what the parsers accept; nothing here lists options by hand.
"""
