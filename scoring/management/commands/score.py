"""``manage.py score SUITE_FILE RUN_FILE …`` (docs/command-line.md#score): the command of
``scoring.runfiles.command``, which ``casebook score`` runs too, its limits' defaults read
from Django's settings."""

from django.conf import settings
from django.core.management.base import BaseCommand

from scoring.runfiles import command


class Command(BaseCommand):
    help = "Score a run file against a suite file, offline."
    requires_system_checks = []

    def add_arguments(self, parser):
        command.add_arguments(parser, settings)

    def handle(self, **options):
        # The command ends its own lines; --json must be exactly JSON.
        self.stdout.ending = self.stderr.ending = ""
        raise SystemExit(command.run(options, settings, self.stdout, self.stderr))
