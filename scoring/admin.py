"""Reviews and review queues in the admin. Runs are picked by id: a submission may hold
100,000 of them, too many for a drop-down."""

from django.contrib import admin

from .models import ModelPrice, QueueItem, Review, ReviewEvent, ReviewQueue


@admin.register(Review)
class ReviewAdmin(admin.ModelAdmin):
    list_display = ["run", "submission", "status", "assignee", "updated"]
    list_filter = ["status"]
    raw_id_fields = ["run", "submission", "assignee"]


@admin.register(ReviewEvent)
class ReviewEventAdmin(admin.ModelAdmin):
    list_display = ["run", "kind", "author", "status", "created"]
    list_filter = ["kind"]
    raw_id_fields = ["run", "author", "assignee"]


@admin.register(ReviewQueue)
class ReviewQueueAdmin(admin.ModelAdmin):
    list_display = ["name", "submission", "created_by", "created"]
    search_fields = ["name"]
    raw_id_fields = ["submission", "created_by"]


@admin.register(QueueItem)
class QueueItemAdmin(admin.ModelAdmin):
    list_display = ["queue", "position", "run", "assignee", "reserved_by", "reserved_until"]
    raw_id_fields = ["queue", "run", "assignee", "reserved_by"]


@admin.register(ModelPrice)
class ModelPriceAdmin(admin.ModelAdmin):
    list_display = ("model", "team", "input_per_mtok", "cached_input_per_mtok", "output_per_mtok")
    list_filter = ("team",)
    search_fields = ("model",)
