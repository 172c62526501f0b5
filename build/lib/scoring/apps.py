from django.apps import AppConfig
from django.conf import settings


class ScoringConfig(AppConfig):
    name = "scoring"
    verbose_name = "Runs and scoring"

    def ready(self) -> None:
        from scoring.matcher import limit_patterns  # the matcher is Django-free: told here

        limit_patterns(settings.CASEBOOK_MAX_PATTERN_LENGTH)
