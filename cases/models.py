"""Teams, suites and their cases, and the immutable versions every saved change produces.

The rows (Suite, Case, ExpectedCall, Expectation) are the working copy that the editor
changes; a SuiteVersion is the suite file (docs/formats.md#suite-files) as it stood after one saved
change. Scoring always uses a version, so later edits never change an old result.
"""

from functools import lru_cache

from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.db import models
from django.urls import reverse
from django.utils.text import slugify
from rest_framework.authtoken.models import Token

from scoring.matcher import Suite as MatcherSuite
from scoring.matcher import load_suite

from .fields import JSONTextField, document_digest


class User(AbstractUser):
    """The project's user model, in place from the first migration so it can grow later."""

    def save(self, *args, **kwargs):
        # Django keeps the new raw password in ``_password`` until the save that stores it,
        # and not when it only re-hashes the same password on sign-in: a real change (the
        # settings page, a reset, the admin, ``changepassword``) revokes the API tokens too,
        # as it ends the other sessions.
        password_changed = self._password is not None and self.pk is not None
        super().save(*args, **kwargs)
        if password_changed:
            self.revoke_api_tokens()

    def revoke_api_tokens(self) -> None:
        """Refuse every API key of the user from now on: their named tokens and the one of
        ``manage.py drf_create_token``."""
        self.api_tokens.all().delete()
        Token.objects.filter(user=self).delete()


class ApiToken(models.Model):
    """A named API key of a user (one per CI job, say). Only a hash of the key is kept: the
    key is shown once, when made, and a copy of the table gives no one access.

    A suite token (``suite`` set) sends live telemetry to that suite only, under its
    ``label`` when it has one, and is accepted by the OTLP receivers alone
    (docs/api.md#authentication)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    key_hash = models.CharField(max_length=64, unique=True)  # SHA-256, hex
    created = models.DateTimeField(auto_now_add=True)
    last_used = models.DateTimeField(null=True, blank=True)
    suite = models.ForeignKey(
        "Suite", on_delete=models.CASCADE, null=True, blank=True, related_name="api_tokens"
    )
    label = models.CharField(max_length=200, blank=True)  # a live submission's label

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                fields=["user", "name"],
                condition=models.Q(suite__isnull=True),
                name="api_token_name_unique_per_user",
            ),
            models.UniqueConstraint(
                fields=["user", "suite", "name"],
                condition=models.Q(suite__isnull=False),
                name="suite_token_name_unique_per_user_and_suite",
            ),
        ]

    def __str__(self):
        return f"{self.name} ({self.user})"


class Role(models.TextChoices):
    VIEWER = "viewer", "viewer"
    EDITOR = "editor", "editor"
    ADMIN = "admin", "admin"


class Team(models.Model):
    name = models.CharField(max_length=100)
    slug = models.SlugField(max_length=100, unique=True)
    members: "models.ManyToManyField[User, Membership]" = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="Membership", related_name="teams"
    )
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    def get_absolute_url(self):
        return reverse("team", args=[self.slug])

    @staticmethod
    def unique_slug(name: str) -> str:
        base = slugify(name)[:90] or "team"
        slug, n = base, 1
        while Team.objects.filter(slug=slug).exists():
            n += 1
            slug = f"{base}-{n}"
        return slug


class Membership(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.VIEWER)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["team", "user"], name="one_membership_per_team")
        ]
        ordering = ["team", "user__username"]

    def __str__(self):
        return f"{self.user} ({self.role}) in {self.team}"


class Visibility(models.TextChoices):
    TEAM = "team", "team members"
    EVERYONE = "everyone", "every signed-in user"


DEFAULT_LIVE_RETENTION_DAYS = 30
# A century: a longer period is "forever" (empty), and the prune's dates stay in range.
MAX_RETENTION_DAYS = 36_500


class Suite(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="suites")
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=200)
    description = models.TextField(blank=True)
    tags = models.JSONField(default=list, blank=True)
    visibility = models.CharField(
        max_length=10, choices=Visibility.choices, default=Visibility.TEAM
    )
    # The suite-wide ``match`` (docs/formats.md#match-options): an object of options,
    # "lenient", or null (defaults).
    match = models.JSONField(null=True, blank=True)
    # Fields of the suite file Casebook does not know, kept for export (docs/formats.md).
    extra = JSONTextField(default=dict, blank=True)
    # Live traces (docs/live-traces.md#routing): a span attribute whose value names a trace's case
    # when no span has ``casebook.case`` (``gen_ai.conversation.id``, say). Not part of the suite
    # file.
    trace_case_attribute = models.CharField(max_length=200, blank=True)
    # Values of that attribute → the case keys they name ({"conv-17": "refund"}); a value
    # not in it names the case of its own key, if there is one (``scoring.live.traces``).
    trace_case_map = models.JSONField(default=dict, blank=True)
    # Retention (docs/operations.md#retention): days the runs of live submissions, and of
    # uploaded ones, are kept; null keeps them forever. Not part of the suite file.
    live_retention_days = models.PositiveIntegerField(
        null=True, blank=True, default=DEFAULT_LIVE_RETENTION_DAYS
    )
    upload_retention_days = models.PositiveIntegerField(null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["team", "slug"], name="suite_slug_unique_in_team")
        ]
        ordering = ["name"]

    def __str__(self):
        return self.name

    def get_absolute_url(self):
        return reverse("suite", args=[self.pk])

    @property
    def latest_version(self):
        return self.versions.order_by("-number").first()


class Case(models.Model):
    suite = models.ForeignKey(Suite, on_delete=models.CASCADE, related_name="cases")
    key = models.CharField(max_length=200)
    title = models.CharField(max_length=300, blank=True)
    prompt = models.TextField(blank=True)
    tags = models.JSONField(default=list, blank=True)
    match = models.JSONField(null=True, blank=True)  # overrides the suite's, key by key
    extra_calls = models.CharField(max_length=10, default="allow")
    position = models.PositiveIntegerField(default=0)
    extra = JSONTextField(default=dict, blank=True)
    # Bumped by every save: an edit made from an older revision is refused, not merged.
    revision = models.PositiveIntegerField(default=1)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["suite", "key"], name="case_key_unique_in_suite")
        ]
        ordering = ["suite", "position", "pk"]

    def __str__(self):
        return self.key

    def get_absolute_url(self):
        return reverse("case_edit", args=[self.suite_id, self.pk])


class ExpectedCall(models.Model):
    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="expected_calls")
    position = models.PositiveIntegerField()
    name = models.CharField(max_length=200)
    required_args = JSONTextField(default=dict, blank=True)
    ordered = models.BooleanField(default=False)
    depends_on_result = models.BooleanField(default=False)
    exact_args = models.BooleanField(default=False)
    extra = JSONTextField(default=dict, blank=True)

    class Meta:
        ordering = ["case", "position"]

    def __str__(self):
        return self.name


class Expectation(models.Model):
    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="expectations")
    position = models.PositiveIntegerField()
    type = models.CharField(max_length=40)
    # The expectation's other fields, as in the suite file (``tool``, ``args``, ``min``...).
    fields = JSONTextField(default=dict, blank=True)

    class Meta:
        ordering = ["case", "position"]

    def __str__(self):
        return self.type


class SuiteVersion(models.Model):
    """The suite file (docs/formats.md#suite-files) as it stood after one saved change; never
    modified."""

    suite = models.ForeignKey(Suite, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    document = JSONTextField()
    # What a process keeps the parsed suite under. Not the id: SQLite gives a rolled-back
    # row's id out again, to a version with other content.
    digest = models.CharField(max_length=64, editable=False, help_text="SHA-256 of the document")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created = models.DateTimeField(auto_now_add=True)
    message = models.CharField(max_length=300, blank=True)
    tag = models.CharField(max_length=50, blank=True, help_text="e.g. release")
    # The version's audit (docs/audit.md), made when it is saved: {"cases", "problems"}.
    # Null for a version saved before audits were kept, until it is first asked for
    # (``cases.audits.stored_audit``). Lists of versions defer it, as they defer the document.
    audit = JSONTextField(null=True, editable=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["suite", "number"], name="version_number_unique")
        ]
        ordering = ["suite", "-number"]

    def __str__(self):
        return f"{self.suite} v{self.number}"

    def save(self, *args, **kwargs):
        if not self.digest:
            self.digest = document_digest(self.document)
        super().save(*args, **kwargs)

    def get_absolute_url(self):
        return reverse("suite_version", args=[self.suite_id, self.number])

    def matcher_suite(self) -> MatcherSuite:
        """The matcher's suite for this version. Versions never change, so each process
        keeps a few, by the digest of their document: an id can come back with other
        content (SQLite gives out a rolled-back row's id again), a digest cannot. Only the
        version's id and digest are read: load it with its document deferred, and the
        document is read once per process."""
        return _matcher_suite(self.pk, self.digest)


@lru_cache(maxsize=16)
def _matcher_suite(version_id: int, digest: str) -> MatcherSuite:
    document = SuiteVersion.objects.values_list("document", flat=True).get(
        pk=version_id, digest=digest
    )
    # Lenient: a version saved before a rule tightened still scores, its bad patterns
    # reported as errors of the runs that reach them.
    return load_suite(document, strict=False)


class LabelColour(models.TextChoices):
    GREY = "grey", "grey"
    RED = "red", "red"
    ORANGE = "orange", "orange"
    GREEN = "green", "green"
    BLUE = "blue", "blue"
    PURPLE = "purple", "purple"


# Keys the run page already gives a meaning to (j/k move, a assigns, c comments), which a
# label may not take.
RESERVED_LABEL_KEYS = frozenset("jkac")


class ReviewLabel(models.Model):
    """A team's own review label ("hallucinated argument", "wrong tool"), applied to runs
    beside their review status; a run may carry several."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="review_labels")
    name = models.CharField(max_length=60)
    key = models.CharField(
        max_length=1, blank=True, help_text="a letter that applies it on the run page"
    )
    colour = models.CharField(max_length=10, choices=LabelColour.choices, default=LabelColour.GREY)

    class Meta:
        ordering = ["team", "name"]
        constraints = [
            models.UniqueConstraint(fields=["team", "name"], name="label_name_unique_in_team"),
            models.UniqueConstraint(
                fields=["team", "key"],
                condition=~models.Q(key=""),
                name="label_key_unique_in_team",
            ),
        ]

    def __str__(self):
        return self.name
