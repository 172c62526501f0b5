from django.urls import path

from .views import account, editor, suites, teams, versions

# The library (home), the suite page and the BFCL import are served by scoring: they show
# or need its parts.

urlpatterns = [
    path("settings/", account.account, name="account"),
    path("teams/", teams.team_list, name="teams"),
    path("teams/<slug:slug>/", teams.team_detail, name="team"),
    path("teams/<slug:slug>/members/", teams.member_add, name="team_member_add"),
    path("teams/<slug:slug>/members/<int:membership_id>/", teams.member_change, name="team_member"),
    path("teams/<slug:slug>/labels/", teams.label_add, name="team_label_add"),
    path("teams/<slug:slug>/labels/<int:label_id>/", teams.label_edit, name="team_label_edit"),
    path(
        "teams/<slug:slug>/labels/<int:label_id>/delete/",
        teams.label_delete,
        name="team_label_delete",
    ),
    path("suites/new/", suites.suite_new, name="suite_new"),
    path("suites/import/", suites.suite_import, name="suite_import"),
    path("suites/import/confirm/", suites.suite_import_confirm, name="suite_import_confirm"),
    path("suites/<int:pk>/settings/", suites.suite_settings, name="suite_settings"),
    path("suites/<int:pk>/import/", suites.suite_replace, name="suite_replace"),
    path(
        "suites/<int:pk>/import/confirm/",
        suites.suite_replace_confirm,
        name="suite_replace_confirm",
    ),
    path("suites/<int:pk>/tools/", suites.suite_tools, name="suite_tools"),
    path("suites/<int:pk>/tools/confirm/", suites.suite_tools_confirm, name="suite_tools_confirm"),
    path("suites/<int:pk>/export/", suites.suite_export, name="suite_export"),
    path("suites/<int:pk>/copy/", suites.suite_copy, name="suite_copy"),
    path("suites/<int:pk>/versions/<int:number>/", versions.version_detail, name="suite_version"),
    path(
        "suites/<int:pk>/versions/<int:number>/tag/", versions.version_tag, name="suite_version_tag"
    ),
    path(
        "suites/<int:pk>/versions/<int:number>/diff/",
        versions.version_diff,
        name="suite_version_diff",
    ),
    path("suites/<int:pk>/cases/new/", editor.case_new, name="case_new"),
    path("suites/<int:pk>/cases/<int:case_id>/", editor.case_edit, name="case_edit"),
    path("suites/<int:pk>/cases/<int:case_id>/delete/", editor.case_delete, name="case_delete"),
    path("suites/<int:pk>/cases/try/", editor.case_try, name="case_try"),
    path("suites/<int:pk>/cases/audit/", editor.case_audit, name="case_audit"),
    path("editor/validate/", editor.validate_field, name="editor_validate"),
]
