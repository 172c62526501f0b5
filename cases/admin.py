from django.contrib import admin
from django.contrib.auth.admin import UserAdmin

from .models import (
    ApiToken,
    Case,
    Expectation,
    ExpectedCall,
    Membership,
    Suite,
    SuiteVersion,
    Team,
    User,
)

admin.site.register(User, UserAdmin)


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    # Keys are shown once, to their user; here a token can only be seen and revoked.
    list_display = ["user", "name", "created", "last_used"]
    search_fields = ["user__username", "name"]
    readonly_fields = ["user", "name", "key_hash", "created", "last_used"]

    def has_add_permission(self, request):
        return False


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "created"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["team", "user", "role"]
    list_filter = ["role", "team"]
    search_fields = ["user__username", "team__name"]


class ExpectedCallInline(admin.TabularInline):
    model = ExpectedCall
    extra = 0


class ExpectationInline(admin.TabularInline):
    model = Expectation
    extra = 0


@admin.register(Case)
class CaseAdmin(admin.ModelAdmin):
    list_display = ["key", "suite", "title", "position", "revision"]
    list_filter = ["suite__team"]
    search_fields = ["key", "title", "prompt", "suite__name"]
    inlines = [ExpectedCallInline, ExpectationInline]


class CaseInline(admin.TabularInline):
    model = Case
    fields = ["key", "title", "position"]
    extra = 0
    show_change_link = True


@admin.register(Suite)
class SuiteAdmin(admin.ModelAdmin):
    list_display = ["name", "team", "visibility", "updated"]
    list_filter = ["team", "visibility"]
    search_fields = ["name", "description"]
    inlines = [CaseInline]


@admin.register(SuiteVersion)
class SuiteVersionAdmin(admin.ModelAdmin):
    list_display = ["suite", "number", "author", "created", "tag", "message"]
    list_filter = ["suite__team"]
    search_fields = ["suite__name", "message", "tag"]
    readonly_fields = ["suite", "number", "document", "author", "created", "message"]

    def has_add_permission(self, request):
        return False  # versions come from saved changes, never by hand
