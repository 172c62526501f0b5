from django.urls import path

from .views import bfcl, case_drafts, compare, library, mywork, queues, run, submission, suite

urlpatterns = [
    path("", library.library, name="home"),
    path("my-work/", mywork.my_work, name="my_work"),
    path("suites/import-bfcl/", bfcl.suite_import_bfcl, name="suite_import_bfcl"),
    path("suites/<int:pk>/", suite.suite_detail, name="suite"),
    path("suites/<int:pk>/upload/", submission.upload, name="upload"),
    path("submissions/<int:pk>/", submission.detail, name="submission"),
    path("submissions/<int:pk>/progress/", submission.progress, name="submission_progress"),
    path(
        "submissions/<int:pk>/versions/<int:number>/",
        submission.earlier_result,
        name="submission_earlier",
    ),
    path("submissions/<int:pk>/rescore/", submission.rescore, name="submission_rescore"),
    path("submissions/<int:pk>/retry/", submission.retry, name="submission_retry"),
    path("submissions/<int:pk>/delete/", submission.delete, name="submission_delete"),
    path("submissions/<int:pk>/failures/", submission.failures, name="submission_failures"),
    path("submissions/<int:pk>/review/", submission.review_runs, name="submission_review"),
    path(
        "submissions/<int:pk>/problems/apply/",
        submission.apply_decisions,
        name="submission_apply_decisions",
    ),
    path(
        "submissions/<int:pk>/cases-from-runs/",
        case_drafts.cases_from_runs,
        name="submission_case_drafts",
    ),
    path("submissions/<int:pk>/tools/", submission.infer_tools, name="submission_tools"),
    path("submissions/<int:pk>/runs.csv", submission.export_csv, name="submission_csv"),
    path("submissions/<int:pk>/junit.xml", submission.export_junit, name="submission_junit"),
    path("submissions/<int:pk>/runs/<int:run_id>/", run.detail, name="run"),
    path("submissions/<int:pk>/runs/<int:run_id>/review/", run.review, name="run_review"),
    path("submissions/<int:pk>/runs/<int:run_id>/draft/", run.draft, name="run_draft_case"),
    path("submissions/<int:pk>/runs/<int:run_id>/promote/", run.promote, name="run_promote"),
    path("submissions/<int:pk>/runs/<int:run_id>/rescore/", run.rescore, name="run_rescore"),
    path("suites/<int:pk>/compare/", compare.submissions, name="compare"),
    path("compare/runs/<int:a>/<int:b>/", compare.runs, name="compare_runs"),
    path("suites/<int:pk>/flaky/", compare.flaky_cases, name="suite_flaky"),
    path("suites/<int:pk>/problems/", suite.open_problems, name="suite_problems"),
    path("suites/<int:pk>/unassigned/", suite.unassigned_runs, name="suite_unassigned"),
    path("submissions/<int:pk>/queues/", queues.queue_list, name="queues"),
    path("submissions/<int:pk>/queues/new/", queues.queue_new, name="queue_new"),
    path("queues/<int:pk>/", queues.queue_detail, name="queue"),
    path("queues/<int:pk>/assign/", queues.queue_assign, name="queue_assign"),
    path("queues/<int:pk>/hand-on/", queues.queue_hand_on, name="queue_hand_on"),
    path("queues/<int:pk>/next/", queues.queue_next, name="queue_next"),
    path("queues/<int:pk>/delete/", queues.queue_delete, name="queue_delete"),
    path("queues/<int:pk>/items/<int:item_id>/decide/", queues.queue_decide, name="queue_decide"),
    path(
        "queues/<int:pk>/items/<int:item_id>/resolve/", queues.queue_resolve, name="queue_resolve"
    ),
]
