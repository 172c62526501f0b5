"""A team's own prices for models (docs/formats.md#cost): self-hosted or negotiated, they
come before the catalogue's when its runs are costed."""

from django.db import models

from cases.models import Team
from scoring.importers.costs import Price, Prices


class ModelPrice(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="model_prices")
    model = models.CharField(max_length=200, help_text="the model's name as runs record it")
    input_per_mtok = models.FloatField(help_text="US dollars per million input tokens")
    cached_input_per_mtok = models.FloatField(
        null=True,
        blank=True,
        help_text="per million input tokens read from a cache; empty: as input",
    )
    output_per_mtok = models.FloatField(help_text="US dollars per million output tokens")

    class Meta:
        ordering = ["team", "model"]
        constraints = [
            models.UniqueConstraint(fields=["team", "model"], name="one_price_per_team_model")
        ]

    def __str__(self):
        return f"{self.model} for {self.team}"


def team_prices(team_id: int | None) -> Prices:
    """The prices a team's runs are costed at: its own for models, before the catalogue's."""
    if team_id is None:
        return Prices()
    own = ModelPrice.objects.filter(team_id=team_id).values_list(
        "model", "input_per_mtok", "output_per_mtok", "cached_input_per_mtok"
    )
    return Prices({model: Price(i, o, c) for model, i, o, c in own})
