"""A team's review labels (docs/review.md): saved once their name and key are free."""

from __future__ import annotations

from django.db import IntegrityError, transaction

from cases.models import (
    ReviewLabel,
)


class LabelTaken(Exception):
    """Another request gave a label of the team this name or key first."""

    def __init__(self, label: ReviewLabel):
        super().__init__(
            f"The team has a label {label.name!r}, or one keyed {label.key!r}, already."
        )


def save_label(label: ReviewLabel) -> None:
    """Save a review label whose form or serializer found its name and key free; raises
    ``LabelTaken`` if a request racing this one took either since."""
    try:
        with transaction.atomic():
            label.save()
    except IntegrityError:
        raise LabelTaken(label) from None
