"""The ``casebook`` command, installed by ``pip install`` with no Django
(docs/command-line.md#the-casebook-command): ``casebook score`` scores a run file offline,
as ``manage.py score`` does (the same code, ``scoring.runfiles.command``);
``casebook submit`` uploads run files to a Casebook server through its HTTP API and gates
a CI build on the answer (docs/ci.md).

May import: ``scoring.runfiles``, ``scoring.matcher``, ``scoring.importers``,
``scoring.environments``. No Django, nothing of the web app (import-linter).
"""
